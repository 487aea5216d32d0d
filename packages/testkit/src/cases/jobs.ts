import { defineCase } from "../define-case.js";
import { delay } from "../eventually.js";
import { deepEqual, ids, processingJob } from "./helpers.js";

export const jobsCases = [
  defineCase({
    id: "jobs/list-filters-and-pagination",
    title: "listJobs filters by status, queue and jobName, newest first, with limit and offset",
    async run(ctx) {
      const queue = ctx.queue();
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        const job = ctx.newJob({ queue, jobName: i % 2 === 0 ? "conformance.even" : "conformance.odd" });
        await ctx.backend.enqueue(job);
        made.push(job.id);
        await delay(3);
      }
      const newest = [...made].reverse();
      deepEqual(ids(await ctx.backend.listJobs({ queue })), newest, "newest first (created_at descending)");
      deepEqual(ids(await ctx.backend.listJobs({ queue, limit: 2 })), newest.slice(0, 2), "limit 2");
      deepEqual(
        ids(await ctx.backend.listJobs({ queue, limit: 2, offset: 2 })),
        newest.slice(2, 4),
        "limit 2 offset 2",
      );
      deepEqual(
        ids(await ctx.backend.listJobs({ queue, jobName: "conformance.odd" })),
        [made[3], made[1]],
        "filter by jobName",
      );
      await ctx.backend.cancel(made[0] as string);
      deepEqual(
        ids(await ctx.backend.listJobs({ queue, status: "cancelled" })),
        [made[0]],
        "filter by one status",
      );
      deepEqual(
        ids(await ctx.backend.listJobs({ queue, status: ["queued", "cancelled"] })),
        newest,
        "filter by several statuses",
      );
      const running = await processingJob(ctx, { queue: ctx.queue("other") });
      deepEqual(ids(await ctx.backend.listJobs({ queue: running.queue, status: "processing" })), [
        running.id,
      ]);
    },
  }),
];
