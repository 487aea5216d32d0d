/**
 * A rolling deploy (DESIGN.md section 20) on every backend: the producer and half the workers run the new code
 * (the job's args at version 2), the other half still the old (version 1). 2,000 jobs: none runs on the old
 * code, none is lost, none spends an attempt by being given back; then the old workers upgrade and the jobs
 * enqueued meanwhile drain on them too.
 */
import type { Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, eventually, matrixHarness } from "./runtime-support.js";

const JOBS = 2_000;

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "versions/rolling-deploy on %s",
  (_name, make) => {
    const t = matrixHarness(make);

    it("versions/rolling-deploy: 2,000 v2 jobs across two v2 and two v1 workers: none runs on v1, none lost, none spends an attempt", async () => {
      const queue = t.queue;
      const ranOn: { id: string; code: number; attempt: number }[] = [];
      const defineNew = (soniq: Soniq) =>
        soniq.job(
          "orders.ship",
          async ({ orderId }: { orderId: string; carrier: string }, ctx) => {
            ranOn.push({ id: ctx.jobId, code: 2, attempt: ctx.attempt });
            return orderId;
          },
          { queue, version: 2, upcast: { 1: (a: { orderId: string }) => ({ ...a, carrier: "dhl" }) } },
        );
      const defineOld = (soniq: Soniq) =>
        soniq.job(
          "orders.ship",
          async ({ orderId }: { orderId: string }, ctx) => {
            ranOn.push({ id: ctx.jobId, code: 1, attempt: ctx.attempt });
            return orderId;
          },
          { queue },
        );
      const producer = await t.app();
      const ship = defineNew(producer);
      const newWorkers: Soniq[] = [producer, await t.app(t.kind.createPeer())];
      const oldWorkers: Soniq[] = [await t.app(t.kind.createPeer()), await t.app(t.kind.createPeer())];
      defineNew(newWorkers[1] as Soniq);
      for (const soniq of oldWorkers) defineOld(soniq);
      // The old workers start first and poll fast, so they meet the new jobs as often as they can.
      const oldRunning = [];
      for (const soniq of oldWorkers)
        oldRunning.push(
          await t.started(
            soniq.worker({
              queues: [queue],
              concurrency: 5,
              maxBatchSize: 5,
              pollIntervalMs: 20,
              newerVersionDelayMs: 1_000,
            }),
          ),
        );
      let givenBack = 0;
      for (const worker of oldRunning) worker.on("job:snoozed", () => givenBack++);

      const handles = [];
      for (let i = 0; i < JOBS; i += 500) {
        handles.push(
          ...(await producer.jobs.enqueueMany(
            Array.from({ length: 500 }, (_, k) => ({
              job: ship,
              args: { orderId: `o-${i + k}`, carrier: "ups" },
            })),
          )),
        );
      }
      // The new code's jobs meet only old workers first (the producer is out, the new workers are not yet).
      await eventually(() => expect(givenBack).toBeGreaterThan(0), 30_000);
      for (const soniq of newWorkers)
        await t.started(
          soniq.worker({ queues: [queue], concurrency: 5, maxBatchSize: 5, pollIntervalMs: 20 }),
        );
      await eventually(async () => {
        expect((await producer.jobs.stats({ queue })).done).toBe(JOBS);
      }, 90_000);
      expect(ranOn.filter((r) => r.code === 1)).toEqual([]);
      // The old workers did meet new jobs (and gave each back): the deploy window was real.
      expect(givenBack).toBeGreaterThan(0);
      console.log(`rolling deploy on ${_name}: ${givenBack} give-backs by the old workers`);
      expect(new Set(ranOn.map((r) => r.id)).size).toBe(JOBS);
      expect(ranOn.filter((r) => r.attempt !== 1)).toEqual([]);
      const first = await producer.jobs.list({ status: "done", queue, limit: 1000 });
      const rest = await producer.jobs.list({ status: "done", queue, limit: 1000, after: first.at(-1) });
      const done = [...first, ...rest];
      expect(done).toHaveLength(JOBS);
      expect(done.filter((j) => j.attempts !== 1 || j.argsVersion !== 2)).toEqual([]);
      expect((await producer.jobs.stats({ queue })).total).toBe(JOBS);

      // The old workers upgrade: they stop and new processes on the new code take their place; a job an old
      // producer still enqueues (version 1) is upcast by them.
      for (const worker of oldRunning) await worker.stop();
      const upgraded = [await t.app(t.kind.createPeer()), await t.app(t.kind.createPeer())];
      for (const soniq of upgraded) {
        defineNew(soniq);
        await t.started(
          soniq.worker({ queues: [queue], concurrency: 5, maxBatchSize: 5, pollIntervalMs: 20 }),
        );
      }
      const old = await oldWorkers[0]?.jobs.enqueue("orders.ship", { orderId: "legacy" }, { version: 1 });
      await eventually(async () => {
        expect((await producer.jobs.stats({ queue })).done).toBe(JOBS + 1);
      }, 30_000);
      expect(ranOn.filter((r) => r.code === 1)).toEqual([]);
      expect(await producer.jobs.get(old?.id as string)).toMatchObject({
        status: "done",
        result: "legacy",
        argsVersion: 1,
      });
    }, 150_000);
  },
);
