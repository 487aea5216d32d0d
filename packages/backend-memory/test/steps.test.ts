import { randomUUID } from "node:crypto";
import type {
  AuditRecord,
  DoneSettlement,
  Job,
  NewJob,
  SignalRequest,
  StepRef,
  StepWrite,
} from "@soniq/core/backend";
import { newJob as testkitJob } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { type MemoryBackend, memoryBackend } from "../src/index.js";
import { type MemoryStore, STORE } from "../src/internal/store.js";

function clock(start = Date.UTC(2026, 0, 1)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** A job of this file, from the testkit's builder (one shape of a new job for every suite). */
const newJob = (overrides: Partial<NewJob> = {}): NewJob =>
  testkitJob({ jobName: "tests.steps", ...overrides });

const WORKER = "worker-1";

function setup() {
  const c = clock();
  const backend = memoryBackend({ now: c.now });
  const store = (backend as MemoryBackend & { [STORE]: MemoryStore })[STORE];
  return { c, backend, store };
}

async function claimOne(backend: MemoryBackend, workerId: string | null = WORKER): Promise<Job | undefined> {
  return (await backend.runs.claim({ queues: null, limit: 1, workerId })).jobs[0];
}

/** Enqueue a job and claim it: the run's ref. */
async function running(backend: MemoryBackend, overrides: Partial<NewJob> = {}): Promise<StepRef> {
  const { id } = await backend.jobs.enqueue(newJob(overrides), {});
  const job = await claimOne(backend);
  if (job?.id !== id) throw new Error("claim expected");
  return { id, attempt: job.attempts, workerId: WORKER };
}

const stepDone = (name: string, value: unknown, startedAt = new Date(0)): StepWrite => ({
  name,
  state: "done",
  value,
  error: null,
  startedAt,
});

const doneItem = (ref: StepRef, result: unknown, resultTtlMs = 60_000): DoneSettlement => ({
  kind: "done",
  id: ref.id,
  attempt: ref.attempt,
  result,
  resultTtlMs,
});

const signalTo = (
  jobId: string,
  name: string,
  payload: unknown,
  key: string | null = null,
): SignalRequest => ({
  jobId,
  name,
  payload,
  key,
  id: randomUUID(),
});

const auditOf = (target: string): AuditRecord => ({
  id: randomUUID(),
  actor: "tests",
  action: "job.signal" as AuditRecord["action"],
  target,
  params: null,
  outcome: "ok",
  details: null,
});

async function deadLetter(backend: MemoryBackend, ref: StepRef): Promise<void> {
  const [moved] = await backend.runs.settle(
    [
      {
        kind: "dead_letter",
        id: ref.id,
        attempt: ref.attempt,
        reason: "permanent_failure",
        error: "boom",
        tags: null,
      },
    ],
    WORKER,
  );
  if (moved !== true) throw new Error("dead-letter move expected");
}

describe("memory steps: save", () => {
  it("writes fenced checkpoints in first-write order, replacing by name, as copies", async () => {
    const { c, backend } = setup();
    const ref = await running(backend);
    const value = { list: [1] };
    expect(
      await backend.steps.save(ref, {
        name: "a",
        state: "failed",
        value: null,
        error: "E1",
        startedAt: new Date(5),
      }),
    ).toBe(true);
    c.advance(10);
    expect(await backend.steps.save(ref, stepDone("b", value))).toBe(true);
    value.list.push(2);
    c.advance(10);
    expect(await backend.steps.save(ref, stepDone("a", "second"))).toBe(true);
    const steps = await backend.steps.list(ref.id);
    expect(steps.map((s) => [s.name, s.state, s.value, s.error])).toEqual([
      ["a", "done", "second", null],
      ["b", "done", { list: [1] }, null],
    ]);
    expect(steps[0]).toMatchObject({ kind: "step", attempt: 1, wakeAt: null });
    expect(steps[0]?.finishedAt?.getTime()).toBe(c.now());
    expect(steps[1]?.finishedAt?.getTime()).toBe(c.now() - 10);
    const b = steps[1];
    if (b === undefined) throw new Error("checkpoint b expected");
    (b.value as { list: number[] }).list.push(3);
    b.startedAt?.setTime(99);
    const again = await backend.steps.list(ref.id);
    expect(again[1]?.value).toEqual({ list: [1] });
    expect(again[1]?.startedAt?.getTime()).toBe(0);
  });

  it("refuses a write whose fence is broken: another attempt, another worker, a job no longer processing", async () => {
    const { backend } = setup();
    const ref = await running(backend);
    expect(await backend.steps.save({ ...ref, attempt: 2 }, stepDone("x", 1))).toBe(false);
    expect(await backend.steps.save({ ...ref, workerId: "other" }, stepDone("x", 1))).toBe(false);
    expect(await backend.steps.save({ ...ref, workerId: null }, stepDone("x", 1))).toBe(true);
    expect(await backend.runs.settle([doneItem(ref, null)], WORKER)).toEqual([true]);
    expect(await backend.steps.save(ref, stepDone("y", 1))).toBe(false);
    expect(await backend.steps.save({ id: randomUUID(), attempt: 1, workerId: null }, stepDone("z", 1))).toBe(
      false,
    );
    expect((await backend.steps.list(ref.id)).map((s) => s.name)).toEqual(["x"]);
  });
});

describe("memory steps: saveInTransaction and completeInTransaction", () => {
  it("saveInTransaction applies the checkpoint after fn returns", async () => {
    const { backend } = setup();
    const ref = await running(backend);
    let seenInside: unknown[] | null = null;
    const out = await backend.steps.saveInTransaction(
      ref,
      async (tx) => {
        expect(tx).toBeUndefined();
        seenInside = await backend.steps.list(ref.id);
        return { charged: 42 };
      },
      (value) => stepDone("charge", value),
    );
    expect(seenInside).toEqual([]);
    expect(out).toEqual({ applied: true, value: { charged: 42 } });
    expect((await backend.steps.list(ref.id)).map((s) => [s.name, s.value])).toEqual([
      ["charge", { charged: 42 }],
    ]);
  });

  it("saveInTransaction stores nothing when fn throws, and rethrows", async () => {
    const { backend } = setup();
    const ref = await running(backend);
    const boom = new Error("boom");
    let built = false;
    await expect(
      backend.steps.saveInTransaction(
        ref,
        () => {
          throw boom;
        },
        (value) => {
          built = true;
          return stepDone("charge", value);
        },
      ),
    ).rejects.toBe(boom);
    expect(built).toBe(false);
    expect(await backend.steps.list(ref.id)).toEqual([]);
  });

  it("saveInTransaction checks the fence after fn: a job cancelled while fn ran stores nothing", async () => {
    const { backend } = setup();
    const ref = await running(backend);
    const out = await backend.steps.saveInTransaction(
      ref,
      async () => {
        expect(await backend.jobs.cancel(ref.id)).toBe(true);
        return "late";
      },
      (value) => stepDone("charge", value),
    );
    expect(out).toEqual({ applied: false, value: "late" });
    expect(await backend.steps.list(ref.id)).toEqual([]);
  });

  it("completeInTransaction settles the job done through runs.settle after fn, fenced by the worker", async () => {
    const { backend } = setup();
    const endpointId = randomUUID();
    const at = new Date(0);
    await backend.webhooks.createEndpoint(
      {
        id: endpointId,
        url: "https://example.com/hook",
        events: ["job.completed"],
        headers: {},
        description: null,
        active: true,
        maxAttempts: 3,
        timeoutMs: 1000,
        retry: { delaysMs: [1000] },
        secretCipher: "x",
        createdAt: at,
        updatedAt: at,
      },
      auditOf(endpointId),
    );
    const finished: string[][] = [];
    await backend.wakeUps.subscribeFinished((ids) => finished.push([...ids]));
    const ref = await running(backend);
    const deliveryId = randomUUID();
    const payload = { event: "job.completed" as const, timestamp: at.toISOString(), data: {}, metadata: {} };
    const lost = await backend.steps.completeInTransaction(
      { ...ref, workerId: "other" },
      () => 1,
      (value) => doneItem(ref, value),
    );
    expect(lost).toEqual({ applied: false, value: 1 });
    expect((await backend.jobs.get(ref.id))?.status).toBe("processing");
    const out = await backend.steps.completeInTransaction(
      ref,
      async () => ({ approved: true }),
      (value) => ({
        ...doneItem(ref, value),
        deliveries: [{ id: deliveryId, endpointId, event: "job.completed", payload, maxAttempts: 3 }],
      }),
    );
    expect(out).toEqual({ applied: true, value: { approved: true } });
    expect(await backend.jobs.get(ref.id)).toMatchObject({ status: "done", result: { approved: true } });
    expect((await backend.webhooks.getDelivery(deliveryId))?.status).toBe("pending");
    await Promise.resolve();
    expect(finished).toEqual([[ref.id]]);
  });

  it("completeInTransaction applies nothing when fn throws; a result TTL of 0 drops the steps with the row", async () => {
    const { backend, store } = setup();
    const ref = await running(backend);
    await backend.steps.save(ref, stepDone("a", 1));
    await backend.steps.signal(signalTo(ref.id, "later", null));
    await expect(
      backend.steps.completeInTransaction(
        ref,
        () => {
          throw new Error("no");
        },
        (value) => doneItem(ref, value),
      ),
    ).rejects.toThrow("no");
    expect((await backend.jobs.get(ref.id))?.status).toBe("processing");
    const out = await backend.steps.completeInTransaction(
      ref,
      () => "r",
      (value) => doneItem(ref, value, 0),
    );
    expect(out.applied).toBe(true);
    expect(await backend.jobs.get(ref.id)).toBeNull();
    expect(await backend.steps.list(ref.id)).toEqual([]);
    expect(store.jobSignals.has(ref.id)).toBe(false);
  });
});

describe("memory steps: wait", () => {
  it("suspends a sleep: queued, due at the wake time, attempt given back, worker cleared; done once it passed", async () => {
    const { c, backend } = setup();
    const ref = await running(backend);
    const start = c.now();
    const sleep = { kind: "sleep" as const, name: "grace", wakeAt: null, delayMs: 60_000 };
    const result = await backend.steps.wait(ref, sleep, 1000);
    expect(result).toEqual({
      state: "waiting",
      wakeAt: new Date(start + 60_000),
      remainingMs: 60_000,
      suspended: true,
    });
    expect(await backend.jobs.get(ref.id)).toMatchObject({
      status: "queued",
      attempts: 0,
      workerId: null,
      scheduledAt: new Date(start + 60_000),
    });
    expect(await backend.jobs.stats({ queue: null })).toMatchObject({ queued: 1, processing: 0 });
    expect(await backend.steps.list(ref.id)).toEqual([
      {
        name: "grace",
        kind: "sleep",
        state: "waiting",
        value: null,
        error: null,
        attempt: 1,
        startedAt: new Date(start),
        finishedAt: null,
        wakeAt: new Date(start + 60_000),
      },
    ]);
    // The suspended run's fence is gone.
    expect(await backend.steps.save(ref, stepDone("x", 1))).toBe(false);
    c.advance(59_999);
    expect(await claimOne(backend)).toBeUndefined();
    c.advance(1);
    const again = await claimOne(backend);
    expect(again).toMatchObject({ id: ref.id, attempts: 1 });
    const next: StepRef = { id: ref.id, attempt: 1, workerId: WORKER };
    expect(await backend.steps.wait(next, sleep, 1000)).toEqual({ state: "done", value: null });
    expect(await backend.steps.list(ref.id)).toMatchObject([
      { name: "grace", state: "done", finishedAt: new Date(c.now()), wakeAt: new Date(start + 60_000) },
    ]);
    expect(await backend.steps.wait(next, sleep, 1000)).toEqual({ state: "done", value: null });
  });

  it("answers a short wait in process without suspending, and keeps the wake time across attempts", async () => {
    const { c, backend } = setup();
    const ref = await running(backend);
    const start = c.now();
    const until = { kind: "sleep" as const, name: "nap", wakeAt: new Date(start + 800), delayMs: 0 };
    expect(await backend.steps.wait(ref, until, 1000)).toEqual({
      state: "waiting",
      wakeAt: new Date(start + 800),
      remainingMs: 800,
      suspended: false,
    });
    expect((await backend.jobs.get(ref.id))?.status).toBe("processing");
    // The run fails and is retried: a later attempt never stretches the sleep.
    c.advance(300);
    expect(
      await backend.runs.settle(
        [
          {
            kind: "requeue",
            id: ref.id,
            attempt: 1,
            cause: "retry",
            attempts: 1,
            delayMs: 0,
            lastError: "e",
          },
        ],
        WORKER,
      ),
    ).toEqual([true]);
    const retry = await claimOne(backend);
    const ref2: StepRef = { id: ref.id, attempt: retry?.attempts ?? -1, workerId: WORKER };
    expect(ref2.attempt).toBe(2);
    const later = { kind: "sleep" as const, name: "nap", wakeAt: null, delayMs: 10_000 };
    expect(await backend.steps.wait(ref2, later, 1000)).toEqual({
      state: "waiting",
      wakeAt: new Date(start + 800),
      remainingMs: 500,
      suspended: false,
    });
    expect((await backend.steps.list(ref.id))[0]).toMatchObject({ attempt: 2, startedAt: new Date(start) });
    c.advance(500);
    expect(await backend.steps.wait(ref2, later, 1000)).toEqual({ state: "done", value: null });
  });

  it("answers lost and writes nothing when the fence is broken", async () => {
    const { backend } = setup();
    const ref = await running(backend);
    const sleep = { kind: "sleep" as const, name: "s", wakeAt: null, delayMs: 5000 };
    expect(await backend.steps.wait({ ...ref, workerId: "other" }, sleep, 1000)).toEqual({ state: "lost" });
    expect(await backend.steps.wait({ ...ref, attempt: 9 }, sleep, 1000)).toEqual({ state: "lost" });
    expect(await backend.steps.list(ref.id)).toEqual([]);
    expect((await backend.jobs.get(ref.id))?.status).toBe("processing");
  });

  it("consumes buffered signals oldest first, each exactly once, and suspends when none is left", async () => {
    const { c, backend, store } = setup();
    const ref = await running(backend);
    expect(await backend.steps.signal(signalTo(ref.id, "approval", { by: "a" }))).toEqual({
      outcome: "stored",
      woke: false,
      deadLetter: false,
    });
    c.advance(1);
    await backend.steps.signal(signalTo(ref.id, "other", "x"));
    await backend.steps.signal(signalTo(ref.id, "approval", { by: "b" }));
    const waitFor = (name: string) => ({
      kind: "signal" as const,
      name,
      signal: "approval",
      timeoutMs: 60_000,
    });
    expect(await backend.steps.wait(ref, waitFor("approval"), 1000)).toEqual({
      state: "done",
      value: { by: "a" },
    });
    expect(await backend.steps.wait(ref, waitFor("approval"), 1000)).toEqual({
      state: "done",
      value: { by: "a" },
    });
    expect(await backend.steps.wait(ref, waitFor("approval#2"), 1000)).toEqual({
      state: "done",
      value: { by: "b" },
    });
    const third = await backend.steps.wait(ref, waitFor("approval#3"), 1000);
    expect(third).toMatchObject({ state: "waiting", suspended: true, remainingMs: 60_000 });
    const signals = store.jobSignals.get(ref.id)?.signals ?? [];
    expect(signals.map((s) => [s.name, s.consumedBy, s.consumedAt])).toEqual([
      ["approval", "approval", c.now()],
      ["other", null, null],
      ["approval", "approval#2", c.now()],
    ]);
    expect((await backend.steps.list(ref.id)).map((s) => [s.name, s.kind, s.state])).toEqual([
      ["approval", "signal", "done"],
      ["approval#2", "signal", "done"],
      ["approval#3", "signal", "waiting"],
    ]);
  });

  it("times a signal wait out at its deadline; a signal arriving later stays for a later wait", async () => {
    const { c, backend } = setup();
    const ref = await running(backend);
    const waitFor = (name: string, timeoutMs = 1000) => ({
      kind: "signal" as const,
      name,
      signal: "go",
      timeoutMs,
    });
    expect(await backend.steps.wait(ref, waitFor("go"), 0)).toMatchObject({
      state: "waiting",
      suspended: true,
    });
    c.advance(1000);
    const again = await claimOne(backend);
    const ref2: StepRef = { id: ref.id, attempt: again?.attempts ?? -1, workerId: WORKER };
    expect(ref2.attempt).toBe(1);
    expect(await backend.steps.wait(ref2, waitFor("go"), 0)).toEqual({ state: "timed_out" });
    expect(await backend.steps.signal(signalTo(ref.id, "go", 7))).toMatchObject({
      outcome: "stored",
      woke: false,
    });
    expect(await backend.steps.wait(ref2, waitFor("go"), 0)).toEqual({ state: "timed_out" });
    expect(await backend.steps.wait(ref2, waitFor("go#2"), 0)).toEqual({ state: "done", value: 7 });
    expect((await backend.steps.list(ref.id)).map((s) => [s.name, s.state, s.wakeAt?.getTime()])).toEqual([
      ["go", "timed_out", c.now()],
      ["go#2", "done", undefined],
    ]);
  });
});

describe("memory steps: signal", () => {
  it("answers not_found, finished, duplicate and dead_letter, auditing only what it stored", async () => {
    const { backend, store } = setup();
    const audits = () => store.auditLog.length;
    expect(await backend.steps.signal(signalTo(randomUUID(), "x", null), auditOf("none"))).toEqual({
      outcome: "not_found",
    });
    const done = await running(backend);
    await backend.runs.settle([doneItem(done, null)], WORKER);
    expect(await backend.steps.signal(signalTo(done.id, "x", null), auditOf(done.id))).toEqual({
      outcome: "finished",
      status: "done",
    });
    const { id: cancelled } = await backend.jobs.enqueue(newJob(), {});
    await backend.jobs.cancel(cancelled);
    expect(await backend.steps.signal(signalTo(cancelled, "x", null))).toEqual({
      outcome: "finished",
      status: "cancelled",
    });
    expect(audits()).toBe(0);
    const dead = await running(backend);
    await deadLetter(backend, dead);
    expect(await backend.steps.signal(signalTo(dead.id, "x", null), auditOf(dead.id))).toEqual({
      outcome: "stored",
      woke: false,
      deadLetter: true,
    });
    expect(store.auditLog.at(-1)).toMatchObject({ action: "job.signal", target: dead.id });
    expect(audits()).toBe(1);

    const { id } = await backend.jobs.enqueue(newJob(), {});
    expect(await backend.steps.signal(signalTo(id, "x", 1, "k1"), auditOf(id))).toMatchObject({
      outcome: "stored",
    });
    expect(audits()).toBe(2);
    expect(await backend.steps.signal(signalTo(id, "x", 2, "k1"), auditOf(id))).toEqual({
      outcome: "duplicate",
    });
    expect(audits()).toBe(2);
    expect(await backend.steps.signal(signalTo(id, "x", 3))).toMatchObject({ outcome: "stored" });
    expect(await backend.steps.signal(signalTo(id, "x", 4))).toMatchObject({ outcome: "stored" });
    expect(store.jobSignals.get(id)?.signals.map((s) => s.payloadJson)).toEqual(["1", "3", "4"]);
    // The key is unique per job only.
    const { id: otherJob } = await backend.jobs.enqueue(newJob(), {});
    expect(await backend.steps.signal(signalTo(otherJob, "x", 1, "k1"))).toMatchObject({ outcome: "stored" });
  });

  it("makes a queued job waiting on that name due now and wakes a worker", async () => {
    const { c, backend } = setup();
    const ref = await running(backend, { queue: "mail" });
    const start = c.now();
    const waitFor = { kind: "signal" as const, name: "approval#2", signal: "approval", timeoutMs: 3_600_000 };
    // A first wait of the name, done, then a second one waiting (its occurrence name carries the suffix).
    await backend.steps.signal(signalTo(ref.id, "approval", "first"));
    await backend.steps.wait(ref, { ...waitFor, name: "approval" }, 1000);
    expect(await backend.steps.wait(ref, waitFor, 1000)).toMatchObject({ state: "waiting", suspended: true });
    c.advance(5000);
    expect(await claimOne(backend)).toBeUndefined();
    const wakes: string[] = [];
    await backend.wakeUps.subscribe((queue) => wakes.push(queue));
    expect(await backend.steps.signal(signalTo(ref.id, "other", null))).toMatchObject({ woke: false });
    await Promise.resolve();
    expect(wakes).toEqual([]);
    expect(await backend.steps.signal(signalTo(ref.id, "approval", { ok: true }))).toEqual({
      outcome: "stored",
      woke: true,
      deadLetter: false,
    });
    expect((await backend.jobs.get(ref.id))?.scheduledAt.getTime()).toBe(start + 5000);
    await Promise.resolve();
    expect(wakes).toEqual(["mail"]);
    const again = await claimOne(backend);
    expect(again).toMatchObject({ id: ref.id, attempts: 1 });
    const ref2: StepRef = { id: ref.id, attempt: 1, workerId: WORKER };
    expect(await backend.steps.wait(ref2, waitFor, 1000)).toEqual({ state: "done", value: { ok: true } });
    // Only one claimable entry: the stale one of the old due time does not give the job twice.
    c.advance(3_600_000);
    expect(await claimOne(backend)).toBeUndefined();
  });

  it("does not wake a queued job that waits on nothing (or on another name)", async () => {
    const { c, backend } = setup();
    const due = new Date(c.now() + 60_000);
    const { id } = await backend.jobs.enqueue(newJob({ scheduledAt: due }), {});
    expect(await backend.steps.signal(signalTo(id, "approval", null))).toMatchObject({ woke: false });
    expect((await backend.jobs.get(id))?.scheduledAt).toEqual(due);
  });
});

describe("memory steps: dead letters and expiry", () => {
  /** A dead letter with checkpoints a (done), b (done), c (failed), one consumed and one unconsumed signal. */
  async function deadWithSteps(backend: MemoryBackend) {
    const ref = await running(backend);
    await backend.steps.save(ref, stepDone("a", "A"));
    await backend.steps.save(ref, stepDone("b", "B"));
    await backend.steps.save(ref, {
      name: "c",
      state: "failed",
      value: null,
      error: "E",
      startedAt: new Date(0),
    });
    await backend.steps.signal(signalTo(ref.id, "s", "consumed", "k1"));
    await backend.steps.wait(ref, { kind: "signal", name: "s", signal: "s", timeoutMs: 1000 }, 1000);
    await backend.steps.signal(signalTo(ref.id, "s", "pending", "k2"));
    await deadLetter(backend, ref);
    return ref.id;
  }

  const replayRequest = (steps?: { keep: boolean; resolve: { name: string; value: unknown }[] }) => ({
    newId: randomUUID(),
    queue: null,
    priority: null,
    scheduledAt: null,
    traceId: null,
    traceContext: null,
    ...(steps === undefined ? {} : { steps }),
  });

  it("keeps the dead letter's steps (same id) and moves done ones and unconsumed signals on replay by default", async () => {
    const { backend, store } = setup();
    const id = await deadWithSteps(backend);
    expect((await backend.steps.list(id)).map((s) => s.name)).toEqual(["a", "b", "c", "s"]);
    const request = replayRequest();
    expect(await backend.deadLetters.replay(id, request)).toBe(request.newId);
    expect((await backend.steps.list(request.newId)).map((s) => [s.name, s.value])).toEqual([
      ["a", "A"],
      ["b", "B"],
      ["s", "consumed"],
    ]);
    expect((await backend.steps.list(id)).map((s) => s.name)).toEqual(["c"]);
    expect(store.jobSignals.get(request.newId)?.signals.map((s) => s.payloadJson)).toEqual(['"pending"']);
    expect(store.jobSignals.get(id)?.signals.map((s) => s.payloadJson)).toEqual(['"consumed"']);
    // The moved key still deduplicates on the new job.
    expect(await backend.steps.signal(signalTo(request.newId, "s", 1, "k2"))).toEqual({
      outcome: "duplicate",
    });
    // The new job's run picks the moved signal up, and its next checkpoint comes after the kept ones.
    const job = await claimOne(backend);
    const ref: StepRef = { id: request.newId, attempt: job?.attempts ?? -1, workerId: WORKER };
    const wait = { kind: "signal" as const, name: "s#2", signal: "s", timeoutMs: 1000 };
    expect(await backend.steps.wait(ref, wait, 1000)).toEqual({ state: "done", value: "pending" });
    expect((await backend.steps.list(request.newId)).map((s) => s.name)).toEqual(["a", "b", "s", "s#2"]);
  });

  it("starts clean on keep: false (signals still move) and records resolved values as done at attempt 0", async () => {
    const { c, backend, store } = setup();
    const id = await deadWithSteps(backend);
    const discard = replayRequest({ keep: false, resolve: [] });
    await backend.deadLetters.replay(id, discard);
    expect(await backend.steps.list(discard.newId)).toEqual([]);
    expect(store.jobSignals.get(discard.newId)?.signals).toHaveLength(1);
    expect((await backend.steps.list(id)).map((s) => s.name)).toEqual(["a", "b", "c", "s"]);

    c.advance(1000);
    const resolve = replayRequest({
      keep: true,
      resolve: [
        { name: "c", value: { paymentId: "manual-1" } },
        { name: "a", value: "A2" },
      ],
    });
    await backend.deadLetters.replay(id, resolve);
    const steps = await backend.steps.list(resolve.newId);
    expect(steps.map((s) => [s.name, s.state, s.value, s.attempt])).toEqual([
      ["a", "done", "A2", 0],
      ["b", "done", "B", 1],
      ["s", "done", "consumed", 1],
      ["c", "done", { paymentId: "manual-1" }, 0],
    ]);
    expect(steps[3]).toMatchObject({
      kind: "step",
      error: null,
      startedAt: new Date(c.now()),
      finishedAt: new Date(c.now()),
      wakeAt: null,
    });
    // The failed checkpoint itself stays with the dead letter.
    expect((await backend.steps.list(id)).map((s) => [s.name, s.state])).toEqual([["c", "failed"]]);
  });

  it("changes nothing when the replay does not apply or a resolved value is not JSON", async () => {
    const { backend } = setup();
    const id = await deadWithSteps(backend);
    expect(await backend.deadLetters.replay(randomUUID(), replayRequest())).toBeNull();
    const bad = replayRequest({ keep: true, resolve: [{ name: "c", value: 1n }] });
    await expect(backend.deadLetters.replay(id, bad)).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    expect(await backend.jobs.get(bad.newId)).toBeNull();
    expect((await backend.steps.list(id)).map((s) => s.name)).toEqual(["a", "b", "c", "s"]);
  });

  it("purging a dead letter deletes its steps and signals", async () => {
    const { backend, store } = setup();
    const id = await deadWithSteps(backend);
    expect(await backend.deadLetters.purge(id)).toBe(true);
    expect(await backend.steps.list(id)).toEqual([]);
    expect(store.jobSteps.has(id)).toBe(false);
    expect(store.jobSignals.has(id)).toBe(false);
    expect(await backend.steps.signal(signalTo(id, "s", null))).toEqual({ outcome: "not_found" });
  });

  it("a done job's steps and signals go when its row expires", async () => {
    const { c, backend, store } = setup();
    const ref = await running(backend);
    await backend.steps.save(ref, stepDone("a", 1));
    await backend.steps.signal(signalTo(ref.id, "unused", null));
    await backend.runs.settle([doneItem(ref, null, 1000)], WORKER);
    expect(await backend.steps.list(ref.id)).toHaveLength(1);
    expect(await backend.jobs.deleteExpired()).toBe(0);
    c.advance(1001);
    expect(await backend.jobs.deleteExpired()).toBe(1);
    expect(await backend.steps.list(ref.id)).toEqual([]);
    expect(store.jobSignals.has(ref.id)).toBe(false);
  });
});
