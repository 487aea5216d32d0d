import { randomUUID } from "node:crypto";
import { isSoniqError, type NewJob } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { memoryBackend } from "../src/index.js";

function clock(start = Date.UTC(2026, 0, 1)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function job(overrides: Partial<NewJob> = {}): NewJob {
  return {
    id: randomUUID(),
    jobName: "tests.job",
    args: { n: 1 },
    argsHash: null,
    queue: "default",
    priority: 100,
    maxAttempts: 3,
    scheduledAt: null,
    dedupKey: null,
    unique: false,
    producerId: null,
    ...overrides,
  };
}

describe("memoryBackend", () => {
  it("claims across queues in priority, scheduled_at, created_at order and waits for future jobs", async () => {
    const c = clock();
    const backend = memoryBackend({ now: c.now });
    const at = (ms: number) => new Date(c.now() + ms);
    const late = await backend.enqueue(job({ queue: "a", priority: 5, scheduledAt: at(1000) }));
    const p10a = await backend.enqueue(job({ queue: "a", priority: 10 }));
    c.advance(1);
    const p10b = await backend.enqueue(job({ queue: "b", priority: 10 }));
    const p1 = await backend.enqueue(job({ queue: "b", priority: 1 }));
    const claimed = await backend.claim({ queues: ["a", "b"], limit: 10, workerId: null });
    expect(claimed.map((j) => j.id)).toEqual([p1.id, p10a.id, p10b.id]);
    c.advance(1000);
    const [due] = await backend.claim({ queues: null, limit: 10, workerId: null });
    expect(due?.id).toBe(late.id);
  });

  it("returns copies: mutating a returned row changes nothing stored", async () => {
    const backend = memoryBackend();
    const { id } = await backend.enqueue(job({ args: { list: [1] } }));
    const first = await backend.getJob(id);
    if (first === null) throw new Error("job missing");
    (first.args as { list: number[] }).list.push(2);
    first.scheduledAt.setTime(0);
    const again = await backend.getJob(id);
    expect(again?.args).toEqual({ list: [1] });
    expect(again?.scheduledAt.getTime()).not.toBe(0);
  });

  it("routes every status write through one guard: dead_letter and terminal regressions are rejected", async () => {
    const backend = memoryBackend();
    const inspector = backend.inspector();
    const { id } = await backend.enqueue(job());
    await expect(inspector.writeJobStatus(id, "dead_letter")).rejects.toMatchObject({
      code: "SONIQ_INVALID_STATUS_TRANSITION",
    });
    const [claimed] = await backend.claim({ queues: ["default"], limit: 1, workerId: null });
    await backend.complete([{ id, attempt: claimed?.attempts ?? 0, result: 1, resultTtlMs: 60_000 }]);
    for (const status of ["queued", "processing", "cancelled"]) {
      const err = await inspector.writeJobStatus(id, status).catch((e: unknown) => e);
      expect(isSoniqError(err, "SONIQ_INVALID_STATUS_TRANSITION")).toBe(true);
    }
    expect((await backend.getJob(id))?.status).toBe("done");
    expect(await backend.getQueueStats()).toMatchObject({ done: 1, queued: 0, processing: 0, total: 1 });
  });

  it("rolls the dead-letter move back when the hook throws between its steps", async () => {
    let armed = true;
    const backend = memoryBackend({
      testHooks: {
        afterDeadLetterInsert: () => {
          if (armed) {
            armed = false;
            throw new Error("injected");
          }
        },
      },
    });
    const { id } = await backend.enqueue(job());
    await expect(
      backend.markJobDeadLetter(id, { reason: "permanent_failure", error: "x" }),
    ).rejects.toMatchObject({
      code: "SONIQ_BACKEND_ERROR",
    });
    expect((await backend.getJob(id))?.status).toBe("queued");
    expect(await backend.getDeadLetterJob(id)).toBeNull();
    expect((await backend.getQueueStats()).dead_letter).toBe(0);
    expect(await backend.markJobDeadLetter(id, { reason: "permanent_failure", error: "x" })).toBe(true);
    expect((await backend.getQueueStats()).dead_letter).toBe(1);
  });

  it("uses the injected clock for result expiry, heartbeats and leases", async () => {
    const c = clock();
    const backend = memoryBackend({ now: c.now });
    const { id } = await backend.enqueue(job());
    const [claimed] = await backend.claim({ queues: null, limit: 1, workerId: null });
    await backend.complete([{ id, attempt: claimed?.attempts ?? 0, result: null, resultTtlMs: 1000 }]);
    expect(await backend.deleteExpiredJobs()).toBe(0);
    c.advance(1001);
    expect(await backend.deleteExpiredJobs()).toBe(1);
    expect(await backend.getJob(id)).toBeNull();

    expect(await backend.tryAcquireLease("leader", "a", 500)).toBe(true);
    expect(await backend.tryAcquireLease("leader", "b", 500)).toBe(false);
    c.advance(501);
    expect(await backend.tryAcquireLease("leader", "b", 500)).toBe(true);
  });

  it("rejects a transaction handle and bad options with typed errors", async () => {
    const backend = memoryBackend();
    const tx = {} as never;
    await expect(backend.enqueue(job(), { tx })).rejects.toMatchObject({
      code: "SONIQ_TRANSACTION_UNSUPPORTED",
    });
    expect(() => memoryBackend({ now: 5 as never, name: "" })).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_OPTIONS" }),
    );
    expect(backend.capabilities).toEqual({
      notify: false,
      transactionalEnqueue: false,
      advisoryLocks: false,
      multiProcess: false,
    });
  });

  it("keeps claim order correct while many queued jobs are cancelled (lazy heap deletion and compaction)", async () => {
    const backend = memoryBackend();
    const ids: string[] = [];
    for (let i = 0; i < 3000; i++) {
      ids.push((await backend.enqueue(job({ priority: i % 7 }))).id);
    }
    // Cancel two thirds: stale entries then outnumber live ones and the lane compacts.
    for (let i = 0; i < 3000; i++) if (i % 3 !== 0) await backend.cancel(ids[i] as string);
    const claimed = await backend.claim({ queues: ["default"], limit: 3000, workerId: null });
    expect(claimed).toHaveLength(1000);
    const keys = claimed.map((j) => j.priority);
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
    expect(new Set(claimed.map((j) => j.id)).size).toBe(1000);
  });
});

describe("memoryBackend workers and wake-ups", () => {
  const worker = (id: string) => ({
    id,
    hostname: "h",
    pid: 1,
    queues: [],
    concurrency: 1,
    version: null,
    metadata: null,
  });

  it("recovers jobs still held by a stopped worker once its last heartbeat passes the threshold", async () => {
    const c = clock();
    const backend = memoryBackend({ now: c.now });
    const workerId = randomUUID();
    await backend.registerWorker(worker(workerId));
    const { id } = await backend.enqueue(job());
    await backend.claim({ queues: null, limit: 1, workerId });
    await backend.stopWorker(workerId);
    c.advance(1000);
    expect(await backend.recoverStaleWorkers(5000)).toEqual({ workerIds: [], requeuedJobIds: [] });
    c.advance(5000);
    expect(await backend.recoverStaleWorkers(5000)).toEqual({ workerIds: [], requeuedJobIds: [id] });
    expect((await backend.getJob(id))?.status).toBe("queued");
  });

  it("wakes subscribers for every job that becomes due now, not for delayed requeues", async () => {
    const c = clock();
    const backend = memoryBackend({ now: c.now });
    const heard: string[] = [];
    await backend.subscribe((queue) => heard.push(queue));
    const flush = () => new Promise((resolve) => setImmediate(resolve));
    await backend.enqueueMany([job({ queue: "a" }), job({ queue: "a" }), job({ queue: "b" })]);
    await flush();
    expect(heard.sort()).toEqual(["a", "b"]);
    heard.length = 0;
    const [first, second] = await backend.claim({ queues: ["a"], limit: 2, workerId: null });
    if (!first || !second) throw new Error("two claims expected");
    await backend.retry({ id: first.id, attempt: first.attempts }, { error: "e", delayMs: 60_000 });
    await flush();
    expect(heard).toEqual([]);
    await backend.nack({ id: second.id, attempt: second.attempts });
    await flush();
    expect(heard).toEqual(["a"]);
  });

  it("drops drained queues from claim-all and keeps claiming new ones", async () => {
    const backend = memoryBackend();
    for (let i = 0; i < 50; i++) {
      await backend.enqueue(job({ queue: `q${i}` }));
      const claimed = await backend.claim({ queues: null, limit: 10, workerId: null });
      expect(claimed).toHaveLength(1);
    }
    expect(await backend.claim({ queues: null, limit: 10, workerId: null })).toEqual([]);
  });

  it("treats a clock that goes backwards safely: a job no longer due is not claimed", async () => {
    const c = clock();
    const backend = memoryBackend({ now: c.now });
    await backend.enqueue(job({ scheduledAt: new Date(c.now() + 100) }));
    const later = await backend.enqueue(job({ scheduledAt: new Date(c.now() + 100) }));
    c.advance(200);
    // This claim promotes both jobs to the due heap and takes the first.
    expect(await backend.claim({ queues: null, limit: 1, workerId: null })).toHaveLength(1);
    c.advance(-150);
    expect(await backend.claim({ queues: null, limit: 1, workerId: null })).toEqual([]);
    c.advance(100);
    const [claimed] = await backend.claim({ queues: null, limit: 1, workerId: null });
    expect(claimed?.id).toBe(later.id);
  });
});

describe("memoryBackend input errors", () => {
  it("rejects bad arguments with typed errors and changes nothing", async () => {
    const backend = memoryBackend();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(backend.enqueue(job({ args: cyclic }))).rejects.toMatchObject({
      code: "SONIQ_TASK_ARGS_INVALID",
    });
    await expect(backend.enqueue(job({ args: { n: 1n } }))).rejects.toMatchObject({
      code: "SONIQ_TASK_ARGS_INVALID",
    });
    await expect(backend.enqueueMany([job(), job({ maxAttempts: 0 })])).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
      message: expect.stringContaining("Job 1: maxAttempts"),
    });
    await expect(backend.claim({ queues: null, limit: 0, workerId: null })).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    expect((await backend.getQueueStats()).total).toBe(0);

    const { id } = await backend.enqueue(job());
    const [claimed] = await backend.claim({ queues: null, limit: 1, workerId: null });
    const ref = { id, attempt: claimed?.attempts ?? 0 };
    await expect(backend.complete([{ ...ref, result: cyclic, resultTtlMs: 1000 }])).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    await expect(backend.retry(ref, { error: "e", delayMs: -1 })).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    expect((await backend.getJob(id))?.status).toBe("processing");
  });
});
