import { defineCase } from "../define-case.js";
import { delay } from "../eventually.js";
import { cancelForSetup, deepEqual, ids, listJobs, processingJob, sorted } from "./helpers.js";

export const jobsCases = [
  defineCase({
    id: "jobs/list-filters-and-pagination",
    title:
      "jobs.list filters by status, queue and jobName while other queues and job names hold matching rows; newest first, paged",
    async run(ctx) {
      const queue = ctx.queue();
      const elsewhere = ctx.queue("elsewhere");
      const made: string[] = [];
      const decoys: string[] = [];
      for (let i = 0; i < 5; i++) {
        const jobName = i % 2 === 0 ? "conformance.even" : "conformance.odd";
        const job = ctx.newJob({ queue, jobName });
        await ctx.backend.jobs.enqueue(job, {});
        made.push(job.id);
        // The same name and status in another queue: a filter that ignores the queue would return it.
        const decoy = ctx.newJob({ queue: elsewhere, jobName });
        await ctx.backend.jobs.enqueue(decoy, {});
        decoys.push(decoy.id);
        await delay(3);
      }
      const newest = [...made].reverse();
      deepEqual(
        ids(await listJobs(ctx, { queue })),
        newest,
        "list({ queue }) must return that queue's jobs only, newest first",
      );
      deepEqual(
        ids(await listJobs(ctx, { queue, limit: 2 })),
        newest.slice(0, 2),
        "limit 2 within the queue",
      );
      deepEqual(
        ids(await listJobs(ctx, { queue, limit: 2, offset: 2 })),
        newest.slice(2, 4),
        "limit 2 offset 2 within the queue",
      );
      deepEqual(
        ids(await listJobs(ctx, { queue, jobName: "conformance.odd" })),
        [made[3], made[1]],
        "list({ queue, jobName }) must apply both filters",
      );
      await cancelForSetup(ctx, made[0] as string, "a queued job");
      await cancelForSetup(ctx, decoys[0] as string, "a queued job of another queue");
      deepEqual(
        ids(await listJobs(ctx, { queue, status: "cancelled" })),
        [made[0]],
        "list({ queue, status }) must apply both filters",
      );
      deepEqual(
        ids(await listJobs(ctx, { queue, status: ["queued", "cancelled"] })),
        newest,
        "list({ queue, status: [two] }) must return jobs in either status of that queue",
      );
      deepEqual(
        sorted(
          ids(await listJobs(ctx, { jobName: "conformance.odd", status: "queued" })).filter(
            (id) => made.includes(id) || decoys.includes(id),
          ),
        ),
        sorted([decoys[3], made[3], decoys[1], made[1]] as string[]),
        "list({ jobName, status }) without a queue must return that name's jobs of every queue",
      );
      const running = await processingJob(ctx, { queue: ctx.queue("other"), jobName: "conformance.even" });
      deepEqual(
        ids(await listJobs(ctx, { queue: running.queue, status: "processing" })),
        [running.id],
        "list({ queue, status: processing }) must return the processing job of that queue",
      );
      deepEqual(
        ids(await listJobs(ctx, { queue, status: "processing" })),
        [],
        "list({ queue, status }) must not return another queue's processing job",
      );
    },
  }),
];
