/**
 * Lease takeover by liveness (DESIGN 7): a would-be holder that passes `takeOver` gets a lease held by a
 * stopped worker, or by one whose heartbeat is older than the taker's `staleAfterMs`, even though the TTL the
 * holder set has not run out (a worker killed while it held the maintenance lease must not block recovery
 * for the TTL it chose). A live holder keeps it; without `takeOver` the TTL alone decides.
 */
import type { WorkerRegistration } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { equal } from "./helpers.js";

const LONG_TTL = 600_000;

async function holdingWorker(ctx: CaseContext, name: string): Promise<string> {
  const worker: WorkerRegistration = {
    id: ctx.id(),
    hostname: "conformance-host",
    pid: 4242,
    queues: [],
    concurrency: 1,
    version: null,
    metadata: null,
  };
  await ctx.backend.workers.register(worker);
  equal(
    await ctx.backend.leases.tryAcquire(name, worker.id, LONG_TTL),
    true,
    "a free lease must be acquired",
  );
  return worker.id;
}

export const leaseTakeoverCases = [
  defineCase({
    id: "leases/take-over-from-stale-holder",
    title:
      "with takeOver, a lease whose holder's heartbeat is older than the taker's staleAfterMs is taken over before its TTL; a live holder keeps it",
    requires: { inspector: ["backdateWorkerHeartbeat"] },
    async run(ctx) {
      const name = `lease-${ctx.id()}`;
      const holder = await holdingWorker(ctx, name);
      const taker = ctx.id();
      equal(
        await ctx.backend.leases.tryAcquire(name, taker, LONG_TTL, { staleAfterMs: 60_000 }),
        false,
        "a holder that heartbeat just now is live: its lease must be refused",
      );
      await ctx.inspector.backdateWorkerHeartbeat(holder, 30_000);
      equal(
        await ctx.backend.leases.tryAcquire(name, taker, LONG_TTL),
        false,
        "without takeOver only the TTL frees a lease",
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, taker, LONG_TTL, { staleAfterMs: 60_000 }),
        false,
        "a heartbeat 30 s old is live for a taker whose staleAfterMs is 60 s",
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, taker, LONG_TTL, { staleAfterMs: 1000 }),
        true,
        "a heartbeat 30 s old is stale for a taker whose staleAfterMs is 1 s: the lease must be taken over",
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, holder, LONG_TTL),
        false,
        "the stale holder must have lost the lease",
      );
    },
  }),
  defineCase({
    id: "leases/take-over-from-stopped-holder",
    title:
      "with takeOver, a lease held by a stopped worker is taken over at once; one held by a non-worker is not",
    async run(ctx) {
      const name = `lease-${ctx.id()}`;
      const holder = await holdingWorker(ctx, name);
      await ctx.backend.workers.stop(holder);
      equal(
        await ctx.backend.leases.tryAcquire(name, ctx.id(), LONG_TTL, { staleAfterMs: 3_600_000 }),
        true,
        "a stopped worker's lease must be taken over",
      );
      const other = `lease-${ctx.id()}`;
      equal(await ctx.backend.leases.tryAcquire(other, "not-a-worker", LONG_TTL), true, "a free lease");
      equal(
        await ctx.backend.leases.tryAcquire(other, ctx.id(), LONG_TTL, { staleAfterMs: 1 }),
        false,
        "a holder with no worker row has no liveness to judge: only its TTL frees the lease",
      );
    },
  }),
];
