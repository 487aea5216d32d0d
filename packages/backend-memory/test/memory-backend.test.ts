import { randomUUID } from "node:crypto";
import { memoryBackendWithFaults } from "@soniq/backend-memory/testing";
import type { NewJob, Settlement } from "@soniq/core/backend";
import { describe, expect, it } from "vitest";
import { memoryBackend, memoryInspector } from "../src/index.js";

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
    group: null,
    flowId: null,
    stepRef: null,
    argsVersion: null,
    traceId: null,
    traceContext: null,
    ...overrides,
  };
}

const claimAll = { queues: null, limit: 100, workerId: null };
const done = (ref: { id: string; attempts: number }, resultTtlMs = 60_000): Settlement => ({
  kind: "done",
  id: ref.id,
  attempt: ref.attempts,
  result: null,
  resultTtlMs,
});

describe("memoryBackend", () => {
  it("claims across queues in priority, scheduled_at, created_at order and waits for future jobs", async () => {
    const c = clock();
    const { jobs, runs } = memoryBackend({ now: c.now });
    const at = (ms: number) => new Date(c.now() + ms);
    const late = await jobs.enqueue(job({ queue: "a", priority: 5, scheduledAt: at(1000) }), {});
    const p10a = await jobs.enqueue(job({ queue: "a", priority: 10 }), {});
    c.advance(1);
    const p10b = await jobs.enqueue(job({ queue: "b", priority: 10 }), {});
    const p1 = await jobs.enqueue(job({ queue: "b", priority: 1 }), {});
    const claimed = (await runs.claim({ queues: ["a", "b"], limit: 10, workerId: null })).jobs;
    expect(claimed.map((j) => j.id)).toEqual([p1.id, p10a.id, p10b.id]);
    c.advance(1000);
    const [due] = (await runs.claim(claimAll)).jobs;
    expect(due?.id).toBe(late.id);
  });

  it("returns copies: mutating a returned row changes nothing stored", async () => {
    const { jobs } = memoryBackend();
    const { id } = await jobs.enqueue(job({ args: { list: [1] } }), {});
    const first = await jobs.get(id);
    if (first === null) throw new Error("job missing");
    (first.args as { list: number[] }).list.push(2);
    first.scheduledAt.setTime(0);
    const again = await jobs.get(id);
    expect(again?.args).toEqual({ list: [1] });
    expect(again?.scheduledAt.getTime()).not.toBe(0);
  });

  it("routes every status write through one guard: dead_letter and terminal regressions are rejected", async () => {
    const backend = memoryBackend();
    const inspector = memoryInspector(backend);
    const { id } = await backend.jobs.enqueue(job(), {});
    await expect(inspector.writeJobStatus(id, "dead_letter")).rejects.toMatchObject({
      code: "SONIQ_INVALID_STATUS_TRANSITION",
    });
    const [claimed] = (await backend.runs.claim(claimAll)).jobs;
    if (!claimed) throw new Error("claim expected");
    expect(await backend.runs.settle([done(claimed)])).toEqual([true]);
    for (const status of ["queued", "processing", "cancelled"]) {
      await expect(inspector.writeJobStatus(id, status)).rejects.toMatchObject({
        code: "SONIQ_INVALID_STATUS_TRANSITION",
      });
    }
    expect((await backend.jobs.get(id))?.status).toBe("done");
    expect(await backend.jobs.stats({ queue: null })).toMatchObject({ done: 1, queued: 0, total: 1 });
  });

  it("undoes a whole settle when the fault hook interrupts one of its dead-letter moves", async () => {
    let armed = true;
    const backend = memoryBackendWithFaults(undefined, {
      interruptDeadLetterMove: () => {
        const fire = armed;
        armed = false;
        return fire;
      },
    });
    await backend.jobs.enqueueMany([job(), job()], {});
    const [a, b] = (await backend.runs.claim(claimAll)).jobs;
    if (!a || !b) throw new Error("two claims expected");
    const items: Settlement[] = [
      done(a),
      {
        kind: "dead_letter",
        id: b.id,
        attempt: b.attempts,
        reason: "permanent_failure",
        error: "x",
        tags: null,
      },
    ];
    await expect(backend.runs.settle(items)).rejects.toMatchObject({ code: "SONIQ_BACKEND_ERROR" });
    expect((await backend.jobs.get(a.id))?.status).toBe("processing");
    expect((await backend.jobs.get(b.id))?.status).toBe("processing");
    expect(await backend.deadLetters.get(b.id)).toBeNull();
    expect(await backend.jobs.stats({ queue: null })).toMatchObject({ processing: 2, dead_letter: 0 });
    expect(await backend.runs.settle(items)).toEqual([true, true]);
    expect(await backend.jobs.stats({ queue: null })).toMatchObject({ done: 1, dead_letter: 1, total: 2 });
  });

  it("uses the injected clock for result expiry, requeue delays, heartbeats and leases", async () => {
    const c = clock();
    const { jobs, runs, leases } = memoryBackend({ now: c.now });
    const { id } = await jobs.enqueue(job(), {});
    const [claimed] = (await runs.claim(claimAll)).jobs;
    if (!claimed) throw new Error("claim expected");
    await runs.settle([done(claimed, 1000)]);
    expect(await jobs.deleteExpired()).toBe(0);
    c.advance(1001);
    expect(await jobs.deleteExpired()).toBe(1);
    expect(await jobs.get(id)).toBeNull();

    const again = await jobs.enqueue(job(), {});
    const [run] = (await runs.claim(claimAll)).jobs;
    if (!run) throw new Error("claim expected");
    const requeue = { kind: "requeue", cause: "retry", attempts: 1, lastError: "e" } as const;
    await runs.settle([{ ...requeue, id: again.id, attempt: run.attempts, delayMs: 500 }]);
    expect((await runs.claim(claimAll)).jobs).toEqual([]);
    c.advance(500);
    expect((await runs.claim(claimAll)).jobs.map((j) => j.id)).toEqual([again.id]);

    expect(await leases.tryAcquire("leader", "a", 500)).toBe(true);
    expect(await leases.tryAcquire("leader", "b", 500)).toBe(false);
    c.advance(501);
    expect(await leases.tryAcquire("leader", "b", 500)).toBe(true);
  });

  it("rejects a transaction handle and bad options with typed errors", async () => {
    const backend = memoryBackend();
    const tx = {} as never;
    await expect(backend.jobs.enqueue(job(), { tx })).rejects.toMatchObject({
      code: "SONIQ_TRANSACTION_UNSUPPORTED",
    });
    expect(() => memoryBackend({ now: 5 as never, name: "" })).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_OPTIONS" }),
    );
    // The fault hook lives in the /testing entry only: the main entry refuses it like any unknown option.
    const withHooks = { testHooks: { interruptDeadLetterMove: () => true } } as never;
    expect(() => memoryBackend(withHooks)).toThrow(
      expect.objectContaining({
        code: "SONIQ_INVALID_OPTIONS",
        context: { problems: ['no option "testHooks" (it takes now, name)'] },
      }),
    );
    expect(() => memoryBackendWithFaults({}, { interruptDeadLetterMove: true } as never)).toThrow(
      expect.objectContaining({
        code: "SONIQ_INVALID_OPTIONS",
        context: { problems: ["interruptDeadLetterMove must be a function"] },
      }),
    );
    expect(backend.capabilities).toEqual({
      notify: false,
      transactionalEnqueue: false,
      advisoryLocks: false,
      multiProcess: false,
    });
  });

  it("keeps claim order correct while many queued jobs are cancelled (lazy heap deletion and compaction)", async () => {
    const { jobs, runs } = memoryBackend();
    const ids: string[] = [];
    for (let i = 0; i < 3000; i++) ids.push((await jobs.enqueue(job({ priority: i % 7 }), {})).id);
    // Cancel two thirds: stale entries then outnumber live ones and the lane compacts.
    for (let i = 0; i < 3000; i++) if (i % 3 !== 0) await jobs.cancel(ids[i] as string);
    const claimed = (await runs.claim({ queues: ["default"], limit: 3000, workerId: null })).jobs;
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

  it("recovers the jobs of a stopped worker, or of one without a row, at once and leaves active workers' alone", async () => {
    const backend = memoryBackend();
    const stopped = randomUUID();
    const active = randomUUID();
    await backend.workers.register(worker(stopped));
    await backend.workers.register(worker(active));
    const lost = await backend.jobs.enqueue(job(), {});
    await backend.runs.claim({ queues: null, limit: 1, workerId: stopped });
    await backend.jobs.enqueue(job(), {});
    await backend.runs.claim({ queues: null, limit: 1, workerId: active });
    await backend.workers.stop(stopped);
    // Claimed by an id with no worker row (the memory backend does not check registration).
    const orphan = await backend.jobs.enqueue(job(), {});
    await backend.runs.claim({ queues: null, limit: 1, workerId: randomUUID() });
    const recovery = await backend.workers.recoverStale(60_000);
    expect(recovery.workerIds).toEqual([]);
    expect(recovery.requeuedJobIds.sort()).toEqual([lost.id, orphan.id].sort());
    expect((await backend.jobs.get(lost.id))?.status).toBe("queued");
    expect((await backend.jobs.get(orphan.id))?.workerId).toBeNull();
    expect(await backend.jobs.stats({ queue: null })).toMatchObject({ queued: 2, processing: 1 });
  });

  it("wakes subscribers for every job that becomes due now, not for delayed requeues", async () => {
    const c = clock();
    const backend = memoryBackend({ now: c.now });
    const heard: string[] = [];
    await backend.wakeUps.subscribe((queue) => heard.push(queue));
    const flush = () => new Promise((resolve) => setImmediate(resolve));
    await backend.jobs.enqueueMany([job({ queue: "a" }), job({ queue: "a" }), job({ queue: "b" })], {});
    await flush();
    expect(heard.sort()).toEqual(["a", "b"]);
    heard.length = 0;
    const [first, second] = (await backend.runs.claim({ queues: ["a"], limit: 2, workerId: null })).jobs;
    if (!first || !second) throw new Error("two claims expected");
    const requeue = { kind: "requeue", cause: "retry", lastError: null } as const;
    await backend.runs.settle([
      { ...requeue, id: first.id, attempt: first.attempts, attempts: 1, delayMs: 60_000 },
    ]);
    await flush();
    expect(heard).toEqual([]);
    await backend.runs.settle([
      { ...requeue, id: second.id, attempt: second.attempts, attempts: 0, delayMs: 0 },
    ]);
    await flush();
    expect(heard).toEqual(["a"]);
  });

  it("drops drained queues from claim-all and keeps claiming new ones", async () => {
    const { jobs, runs } = memoryBackend();
    for (let i = 0; i < 50; i++) {
      await jobs.enqueue(job({ queue: `q${i}` }), {});
      expect((await runs.claim({ queues: null, limit: 10, workerId: null })).jobs).toHaveLength(1);
    }
    expect((await runs.claim(claimAll)).jobs).toEqual([]);
  });

  it("treats a clock that goes backwards safely: a job no longer due is not claimed", async () => {
    const c = clock();
    const { jobs, runs } = memoryBackend({ now: c.now });
    await jobs.enqueue(job({ scheduledAt: new Date(c.now() + 100) }), {});
    const later = await jobs.enqueue(job({ scheduledAt: new Date(c.now() + 100) }), {});
    c.advance(200);
    // This claim promotes both jobs to the due heap and takes the first.
    expect((await runs.claim({ queues: null, limit: 1, workerId: null })).jobs).toHaveLength(1);
    c.advance(-150);
    expect((await runs.claim({ queues: null, limit: 1, workerId: null })).jobs).toEqual([]);
    c.advance(100);
    const [claimed] = (await runs.claim({ queues: null, limit: 1, workerId: null })).jobs;
    expect(claimed?.id).toBe(later.id);
  });
});

describe("memoryBackend input errors", () => {
  it("rejects values that would not survive a database round trip and changes nothing", async () => {
    const backend = memoryBackend();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(backend.jobs.enqueueMany([job(), job({ args: { n: 1n } })], {})).rejects.toMatchObject({
      code: "SONIQ_TASK_ARGS_INVALID",
    });
    expect((await backend.jobs.stats({ queue: null })).total).toBe(0);
    const { id } = await backend.jobs.enqueue(job(), {});
    const [claimed] = (await backend.runs.claim(claimAll)).jobs;
    if (!claimed) throw new Error("claim expected");
    const result: Settlement = {
      kind: "done",
      id,
      attempt: claimed.attempts,
      result: cyclic,
      resultTtlMs: 1000,
    };
    await expect(backend.runs.settle([result])).rejects.toMatchObject({ code: "SONIQ_INVALID_ARGUMENT" });
    expect((await backend.jobs.get(id))?.status).toBe("processing");
  });
});
