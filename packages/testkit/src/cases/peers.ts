import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import { deepEqual, equal, ids } from "./helpers.js";

export const peerCases = [
  defineCase({
    id: "peers/claims-never-overlap",
    title: "two instances on the same storage, claiming concurrently, get each of 30 jobs exactly once",
    requires: { peer: true, capabilities: { multiProcess: true } },
    async run(ctx) {
      const peer = await ctx.openPeer();
      const queue = ctx.queue();
      await ctx.backend.jobs.enqueueMany(
        Array.from({ length: 30 }, () => ctx.newJob({ queue })),
        {},
      );
      const drain = async (backend: typeof peer) => {
        const got: string[] = [];
        for (;;) {
          const batch = (await backend.runs.claim({ queues: [queue], limit: 4, workerId: null })).jobs;
          if (batch.length === 0) return got;
          got.push(...ids(batch));
        }
      };
      const all = (
        await Promise.all([drain(ctx.backend), drain(peer), drain(ctx.backend), drain(peer)])
      ).flat();
      equal(all.length, 30, "30 jobs must yield 30 claims across both instances");
      equal(new Set(all).size, 30, "no job may be claimed by both instances");
    },
  }),
  defineCase({
    id: "peers/see-each-others-writes",
    title: "a job enqueued on one instance is read, claimed and completed through the other",
    requires: { peer: true, capabilities: { multiProcess: true } },
    async run(ctx) {
      const peer = await ctx.openPeer();
      const job = ctx.newJob({ queue: ctx.queue() });
      await ctx.backend.jobs.enqueue(job, {});
      equal((await peer.jobs.get(job.id))?.status, "queued", "the peer must read the job");
      const [claimed] = (await peer.runs.claim({ queues: [job.queue], limit: 1, workerId: null })).jobs;
      equal(claimed?.id, job.id, "the peer must claim it");
      deepEqual(
        await peer.runs.settle([{ kind: "done", id: job.id, attempt: 1, result: "ok", resultTtlMs: 60_000 }]),
        [true],
        "the peer's settle of the job it claimed must apply",
      );
      deepEqual(
        (await ctx.backend.jobs.get(job.id))?.result,
        "ok",
        "the first instance must see the peer's result",
      );
    },
  }),
  defineCase({
    id: "peers/wake-up-reaches-other-instance",
    title: "with notify, a subscriber on one instance hears a job enqueued through another",
    requires: { peer: true, capabilities: { notify: true } },
    async run(ctx) {
      const peer = await ctx.openPeer();
      const heard: string[] = [];
      ctx.defer(await peer.wakeUps.subscribe((queue) => heard.push(queue)));
      const queue = ctx.queue();
      await ctx.backend.jobs.enqueue(ctx.newJob({ queue }), {});
      await eventually(() => equal(heard.includes(queue), true, `the peer has not heard "${queue}" yet`), {
        timeoutMs: 5000,
      });
    },
  }),
  defineCase({
    id: "peers/lease-exclusive-across-instances",
    title: "a lease held through one instance is refused to another holder through the other instance",
    requires: { peer: true, capabilities: { multiProcess: true } },
    async run(ctx) {
      const peer = await ctx.openPeer();
      const name = `lease-${ctx.id()}`;
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-a", 60_000),
        true,
        "a free lease must be acquired",
      );
      equal(
        await peer.leases.tryAcquire(name, "holder-b", 60_000),
        false,
        "the other instance must be refused",
      );
      await ctx.backend.leases.release(name, "holder-a");
      await eventually(
        async () => equal(await peer.leases.tryAcquire(name, "holder-b", 60_000), true, "lease not yet free"),
        { timeoutMs: 5000 },
      );
      ctx.defer(() => peer.leases.release(name, "holder-b"));
    },
  }),
];
