/**
 * Faults the worker must survive without stranding a job (DESIGN.md section 7): failed outcome writes, a
 * maintenance lease held by a dead worker, the maintenance cadence, late handler results.
 */
import { describe, expect, it, vi } from "vitest";
import type { Settlement } from "../src/contract/index.js";
import { computeRetryDelay, DEFAULT_RETRY } from "../src/jobs/retry-policy.js";
import { resolveWorkerOptions } from "../src/worker/options.js";
import { MAINTENANCE_LEASE, maintenanceCadenceMs, maintenanceLeaseTtlMs } from "../src/worker/upkeep.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { eventually } from "./support.js";

const app = memoryApps();

/** A memory backend whose `runs.settle` rejects its first `failures` calls. */
function failingSettle(failures: number) {
  const base = memoryBackend();
  const calls = { total: 0, failed: 0 };
  const backend = overriding(base, "runs", {
    settle: (items: readonly Settlement[], workerId?: string) => {
      calls.total++;
      if (calls.failed < failures) {
        calls.failed++;
        return Promise.reject(new Error("connection terminated"));
      }
      return base.runs.settle(items, workerId);
    },
  });
  return { backend, calls };
}

describe("faults/settle", () => {
  it("faults/settle-retried: a settle call that fails twice is retried and applies; no job stays processing", async () => {
    const { backend, calls } = failingSettle(2);
    const soniq = app({}, backend);
    const job = soniq.job("f.ok", async (n: number) => n);
    const ids = await Promise.all([1, 2, 3].map(async (n) => (await job.enqueue(n)).id));
    const worker = soniq.worker({ pollIntervalMs: 10 });
    const done: string[] = [];
    worker.on("job:done", ({ job }) => done.push(job.id));
    worker.on("error", () => {});
    await worker.start();
    await eventually(async () => {
      expect((await soniq.jobs.stats()).done).toBe(3);
    });
    await worker.stop();
    expect(calls.failed).toBe(2);
    expect(done.sort()).toEqual([...ids].sort());
    expect((await soniq.jobs.stats()).processing).toBe(0);
  });

  it("faults/settle-given-back: when every retry fails the jobs are given back (queued again) and run to done", async () => {
    const { backend, calls } = failingSettle(5);
    const soniq = app({}, backend);
    let runs = 0;
    const job = soniq.job("f.again", async () => ++runs);
    const { id } = await job.enqueue({});
    const worker = soniq.worker({ pollIntervalMs: 10 });
    const errors: string[] = [];
    worker.on("error", ({ during }) => errors.push(during));
    await worker.start();
    await eventually(async () => {
      expect((await soniq.jobs.get(id))?.status).toBe("done");
    }, 15_000);
    await worker.stop();
    expect(calls.failed).toBe(5);
    expect(errors).toEqual(["settle"]);
    expect(runs).toBe(2);
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", attempts: 2, result: 2 });
  }, 20_000);

  it("faults/settle-stranded: if the give-back fails too, the heartbeat is withheld and a peer recovers the job", async () => {
    const { backend } = failingSettle(10);
    const soniq = app({}, backend);
    const job = soniq.job("f.stranded", async () => "late");
    const { id } = await job.enqueue({});
    const worker = soniq.worker({ pollIntervalMs: 10, heartbeatIntervalMs: 50, staleAfterMs: 400 });
    worker.on("error", () => {});
    await worker.start();
    await eventually(async () => {
      // A peer's recovery (the worker withholds its heartbeat, so it turns stale).
      await soniq.backend.workers.recoverStale(400);
      const row = await soniq.jobs.get(id);
      expect(row?.status).not.toBe("processing");
    }, 20_000);
    await worker.stop();
  }, 25_000);
});

describe("faults/maintenance", () => {
  it("faults/maintenance-cadence-follows-stale: staleAfterMs 1000 checks every 500 ms with a lease of at most 1 s", () => {
    const quick = resolveWorkerOptions({ staleAfterMs: 1000, heartbeatIntervalMs: 200 });
    expect(maintenanceCadenceMs(quick)).toBe(500);
    expect(maintenanceLeaseTtlMs(quick)).toBe(1000);
    const defaults = resolveWorkerOptions({});
    expect(maintenanceCadenceMs(defaults)).toBe(30_000);
    expect(maintenanceLeaseTtlMs(defaults)).toBe(60_000);
    expect(maintenanceLeaseTtlMs(defaults)).toBeLessThanOrEqual(defaults.staleAfterMs);
  });

  it("faults/dead-lease-holder-taken-over: a lease held by a dead worker does not block recovery past staleAfterMs", async () => {
    const backend = memoryBackend();
    const soniq = app({}, backend);
    const job = soniq.job("f.orphan", async () => "ok");
    const { id } = await job.enqueue({});
    // A worker that died (no heartbeat, never stopped) while holding the job and the lease.
    const dead = "00000000-0000-4000-8000-00000000dead";
    await backend.workers.register({
      id: dead,
      hostname: "gone",
      pid: 1,
      queues: [],
      concurrency: 1,
      version: null,
      metadata: null,
    });
    await backend.runs.claim({ queues: null, limit: 1, workerId: dead });
    const opts = resolveWorkerOptions({ staleAfterMs: 300, heartbeatIntervalMs: 50 });
    expect(await backend.leases.tryAcquire(MAINTENANCE_LEASE, dead, maintenanceLeaseTtlMs(opts))).toBe(true);
    const worker = soniq.worker({ pollIntervalMs: 10, staleAfterMs: 300, heartbeatIntervalMs: 50 });
    const started = Date.now();
    await worker.start();
    await eventually(async () => {
      expect((await soniq.jobs.get(id))?.status).toBe("done");
    }, 10_000);
    // stale after 300 ms, plus one 150 ms check, plus scheduling slack on a shared machine.
    expect(Date.now() - started).toBeLessThan(3000);
    await worker.stop();
  });
});

describe("faults/runner", () => {
  it("faults/late-done-after-timeout-ignored: a handler finishing after its timeout emits no job:done and no done metric", async () => {
    const ends: string[] = [];
    const soniq = app({
      metrics: { recordJobStart: () => {}, recordJobEnd: (e: { status: string }) => ends.push(e.status) },
    } as never);
    let release!: () => void;
    const finished = new Promise<void>((r) => {
      release = r;
    });
    const job = soniq.job(
      "f.slow",
      async () => {
        await new Promise<void>((r) => setTimeout(r, 150));
        release();
        return "too late";
      },
      { timeoutMs: 20, maxAttempts: 1 },
    );
    const { id } = await job.enqueue({});
    const worker = soniq.worker({ pollIntervalMs: 10 });
    const done: string[] = [];
    worker.on("job:done", ({ job }) => done.push(job.id));
    await worker.start();
    await finished;
    await eventually(async () => {
      expect((await soniq.deadLetters.get(id))?.deadLetterReason).toBe("max_retries_exceeded");
    });
    await worker.stop();
    expect(done).toEqual([]);
    expect(ends).not.toContain("done");
    expect(await soniq.jobs.get(id)).toBeNull();
  });
});

describe("faults/retry-jitter", () => {
  it("faults/default-backoff-full-jitter: a burst of 1000 retries of one attempt spreads over [0, delay]", () => {
    // A seeded generator: deterministic, so the tolerance below cannot flake.
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const ctx = { attempt: 3, maxAttempts: 5, error: new Error("x"), job: {} as never };
    const delays = Array.from(
      { length: 1000 },
      () => computeRetryDelay(DEFAULT_RETRY, ctx, random) as number,
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(4000);
    // 1000 draws from 4001 values: about 885 distinct; a constant delay would give 1.
    expect(new Set(delays).size).toBeGreaterThan(800);
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
    expect(Math.abs(mean - 2000)).toBeLessThan(200);
  });

  it("faults/default-backoff-jitter-at-run-time: failing jobs of one burst are not all due at the same instant", async () => {
    const random = vi.spyOn(Math, "random");
    let i = 0;
    random.mockImplementation(() => ((i++ * 7919) % 1000) / 1000);
    try {
      const soniq = app();
      const job = soniq.job(
        "f.burst",
        async () => {
          throw new Error("fail");
        },
        { maxAttempts: 2 },
      );
      for (let n = 0; n < 20; n++) await job.enqueue(n);
      const worker = soniq.worker({ pollIntervalMs: 10 });
      const delays: number[] = [];
      worker.on("job:failed", ({ delayMs }) => delays.push(delayMs));
      await worker.start();
      await eventually(() => expect(delays).toHaveLength(20));
      await worker.stop();
      expect(new Set(delays).size).toBeGreaterThan(15);
      expect(Math.max(...delays)).toBeLessThanOrEqual(1000);
    } finally {
      random.mockRestore();
    }
  });
});
