/**
 * The steps facet on SQLite (DESIGN.md section 19): fenced checkpoints, transactional steps on the backend's
 * connection, sleeps and signal waits (core's programs over the backend's stores), signals, and what dead-letter
 * replay, purge and the retention sweep do to checkpoints and signals. Each test has its own database file.
 */
import { randomUUID } from "node:crypto";
import {
  auditRecord,
  type DoneSettlement,
  isSoniqError,
  type Job,
  type NewWebhookDelivery,
  newJobId,
  type SignalRequest,
  type StepRef,
  type StepWrite,
  type WaitRequest,
} from "@soniq/core/backend";
import { delay, eventually, newJob, uniqueQueue } from "@soniq/testkit";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SqliteBackend, sqliteBackend } from "../src/index.js";
import { runFixture, tempDir, worker } from "./helpers.js";

const tmp = tempDir("soniq-sqlite-steps-");
afterAll(() => tmp.remove());

let file: string;
let db: Database.Database;
let backend: SqliteBackend;
beforeEach(async () => {
  file = tmp.file();
  db = new Database(file);
  backend = sqliteBackend({ database: db });
  await backend.migrations.apply();
  await backend.workers.register(worker("w"));
  await backend.workers.register(worker("other"));
  db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL CHECK (total >= 0))");
});
afterEach(async () => {
  await backend.close();
  db.close();
});

/** Enqueue one job (in a queue of its own) and claim it as worker "w". */
async function claimed(overrides: Parameters<typeof newJob>[0] = {}): Promise<Job> {
  const job = newJob({ queue: uniqueQueue(), ...overrides });
  await backend.jobs.enqueue(job, {});
  const [taken] = (await backend.runs.claim({ queues: [job.queue], limit: 1, workerId: "w" })).jobs;
  if (taken?.id !== job.id) throw new Error("expected to claim the job just enqueued");
  return taken;
}

/** Make a queued job due now and claim it again as "w". */
async function reclaimed(id: string): Promise<Job> {
  db.prepare("UPDATE soniq_jobs SET scheduled_at = 0 WHERE id = ?").run(id);
  const [taken] = (await backend.runs.claim({ queues: null, limit: 1, workerId: "w" })).jobs;
  if (taken?.id !== id) throw new Error(`expected to claim ${id} again`);
  return taken;
}

const refOf = (job: Job, over: Partial<StepRef> = {}): StepRef => ({
  id: job.id,
  attempt: job.attempts,
  workerId: "w",
  ...over,
});

const done = (name: string, value: unknown): StepWrite => ({
  name,
  state: "done",
  value,
  error: null,
  startedAt: new Date(),
});

const sleep = (name: string, delayMs: number): WaitRequest => ({
  kind: "sleep",
  name,
  wakeAt: null,
  delayMs,
});
const waitFor = (name: string, timeoutMs = 60_000): WaitRequest => ({
  kind: "signal",
  name,
  signal: name.split("#")[0] ?? name,
  timeoutMs,
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
  id: newJobId(),
});

const count = (sql: string, ...params: unknown[]) => (db.prepare(sql).get(...params) as { n: number }).n;
const orders = () => count("SELECT COUNT(*) AS n FROM orders");
const jobRow = (id: string) =>
  db
    .prepare("SELECT status, attempts, worker_id, scheduled_at, result FROM soniq_jobs WHERE id = ?")
    .get(id) as
    | {
        status: string;
        attempts: number;
        worker_id: string | null;
        scheduled_at: number;
        result: string | null;
      }
    | undefined;
const signalRows = (jobId: string) =>
  db
    .prepare("SELECT payload, consumed_by FROM soniq_job_signals WHERE job_id = ? ORDER BY created_at, rowid")
    .all(jobId) as { payload: string; consumed_by: string | null }[];

/** Claim `job` and dead-letter it, as core does when its handler fails for good. */
async function deadLettered(job: Job): Promise<void> {
  const applied = await backend.runs.settle(
    [
      {
        kind: "dead_letter",
        id: job.id,
        attempt: job.attempts,
        reason: "permanent_failure",
        error: "x",
        tags: null,
      },
    ],
    "w",
  );
  expect(applied).toEqual([true]);
}

function rejected(err: unknown): unknown {
  return err;
}

describe("sqlite/steps save", () => {
  it("sqlite/steps-save: writes a checkpoint in first-write order, replaces it on a later save, and lists it", async () => {
    const job = await claimed();
    expect(await backend.steps.save(refOf(job), done("charge", { paymentId: "p1" }))).toBe(true);
    expect(
      await backend.steps.save(refOf(job), {
        name: "ship",
        state: "failed",
        value: null,
        error: "Error: no stock",
        startedAt: new Date(),
      }),
    ).toBe(true);
    expect(await backend.steps.save(refOf(job), done("charge", { paymentId: "p2" }))).toBe(true);
    const steps = await backend.steps.list(job.id);
    expect(steps.map((s) => [s.name, s.kind, s.state, s.value, s.error, s.attempt])).toEqual([
      ["charge", "step", "done", { paymentId: "p2" }, null, 1],
      ["ship", "step", "failed", null, "Error: no stock", 1],
    ]);
    expect(steps[0]?.startedAt).toBeInstanceOf(Date);
    expect(steps[0]?.finishedAt).toBeInstanceOf(Date);
    expect(steps[0]?.wakeAt).toBeNull();
    expect(await backend.steps.list(randomUUID())).toEqual([]);
  });

  it("sqlite/steps-save-fenced: a wrong attempt, another worker or a job no longer processing stores nothing", async () => {
    const job = await claimed();
    expect(await backend.steps.save(refOf(job, { attempt: job.attempts + 1 }), done("a", 1))).toBe(false);
    expect(await backend.steps.save(refOf(job, { workerId: "other" }), done("b", 1))).toBe(false);
    // No worker named: fenced by attempt alone.
    expect(await backend.steps.save(refOf(job, { workerId: null }), done("c", 1))).toBe(true);
    await backend.jobs.cancel(job.id);
    expect(await backend.steps.save(refOf(job), done("d", 1))).toBe(false);
    expect((await backend.steps.list(job.id)).map((s) => s.name)).toEqual(["c"]);
  });
});

describe("sqlite/steps saveInTransaction", () => {
  const insertOrder = (tx: unknown, total: number) =>
    (tx as Database.Database).prepare("INSERT INTO orders (total) VALUES (?)").run(total).lastInsertRowid;

  it("sqlite/steps-tx-commit: the application's write and the checkpoint commit together", async () => {
    const job = await claimed();
    const result = await backend.steps.saveInTransaction(
      refOf(job),
      (tx) => {
        expect(tx).toBe(db);
        expect(db.inTransaction).toBe(true);
        return Number(insertOrder(tx, 10));
      },
      (orderId) => done("create_order", { orderId }),
    );
    expect(result).toEqual({ applied: true, value: 1 });
    expect(orders()).toBe(1);
    expect((await backend.steps.list(job.id)).map((s) => s.value)).toEqual([{ orderId: 1 }]);
  });

  it("sqlite/steps-tx-enqueue: a job enqueued with tx inside the function commits with the step", async () => {
    const job = await claimed();
    const next = newJob();
    const result = await backend.steps.saveInTransaction(
      refOf(job),
      (tx) => {
        void backend.jobs.enqueue(next, { tx });
        return "queued";
      },
      (value) => done("follow_up", value),
    );
    expect(result.applied).toBe(true);
    expect((await backend.jobs.get(next.id))?.status).toBe("queued");
  });

  it("sqlite/steps-tx-fence: a broken fence rolls the application's write back and answers the value", async () => {
    const job = await claimed();
    const result = await backend.steps.saveInTransaction(
      refOf(job, { attempt: job.attempts + 1 }),
      (tx) => Number(insertOrder(tx, 10)),
      (orderId) => done("create_order", { orderId }),
    );
    expect(result).toEqual({ applied: false, value: 1 });
    expect(orders()).toBe(0);
    expect(await backend.steps.list(job.id)).toEqual([]);
    expect(db.inTransaction).toBe(false);
  });

  it("sqlite/steps-tx-throw: a throwing function rolls back and its own error is rethrown untranslated", async () => {
    const job = await claimed();
    const boom = new Error("boom");
    const err = await backend.steps
      .saveInTransaction(
        refOf(job),
        (tx) => {
          insertOrder(tx, 10);
          throw boom;
        },
        () => done("x", null),
      )
      .catch(rejected);
    expect(err).toBe(boom);
    // A SQLite error of the application's own (its CHECK) is its error too, not a SONIQ_ code.
    const sqliteErr = await backend.steps
      .saveInTransaction(
        refOf(job),
        (tx) => insertOrder(tx, -1),
        () => done("x", null),
      )
      .catch(rejected);
    expect((sqliteErr as { code?: string }).code).toBe("SQLITE_CONSTRAINT_CHECK");
    expect(isSoniqError(sqliteErr)).toBe(false);
    expect(orders()).toBe(0);
    expect(await backend.steps.list(job.id)).toEqual([]);
    expect(db.inTransaction).toBe(false);
  });

  it("sqlite/steps-tx-async: an async function is refused with SONIQ_INVALID_ARGUMENT and leaves nothing", async () => {
    const job = await claimed();
    const err = await backend.steps
      .saveInTransaction(
        refOf(job),
        async (tx) => {
          insertOrder(tx, 10); // runs before the first await: inside the transaction, rolled back
          throw new Error("rejected later: must not be an unhandled rejection");
        },
        () => done("x", null),
      )
      .catch(rejected);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect((err as { context?: unknown }).context).toEqual({ field: "fn" });
    const resolving = await backend.steps
      .saveInTransaction(
        refOf(job),
        async () => 1,
        () => done("x", null),
      )
      .catch(rejected);
    expect(isSoniqError(resolving, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect(orders()).toBe(0);
    expect(await backend.steps.list(job.id)).toEqual([]);
    expect(db.inTransaction).toBe(false);
    // The backend still works.
    expect(await backend.steps.save(refOf(job), done("after", 1))).toBe(true);
  });
});

describe("sqlite/steps completeInTransaction", () => {
  const insertOrder = (tx: unknown) =>
    (tx as Database.Database).prepare("INSERT INTO orders (total) VALUES (5)").run();
  const doneItem = (job: Job, result: unknown, extra: Partial<DoneSettlement> = {}): DoneSettlement => ({
    kind: "done",
    id: job.id,
    attempt: job.attempts,
    result,
    resultTtlMs: 60_000,
    ...extra,
  });

  async function endpoint(): Promise<string> {
    const id = randomUUID();
    const at = new Date();
    await backend.webhooks.createEndpoint(
      {
        id,
        url: "https://hooks.example.com/soniq",
        events: ["job.completed"],
        headers: {},
        description: null,
        active: true,
        maxAttempts: 3,
        timeoutMs: 5000,
        retry: { backoff: "exponential", delayMs: 10_000, maxDelayMs: 600_000, jitter: true },
        secretCipher: "v1.iv.tag.body",
        createdAt: at,
        updatedAt: at,
      },
      auditRecord("webhook.register", "test", id, null),
    );
    return id;
  }

  it("sqlite/steps-complete: the application's write, the done, its result and its deliveries commit together", async () => {
    const endpointId = await endpoint();
    const job = await claimed();
    const finished: string[] = [];
    await backend.wakeUps.subscribeFinished((ids) => finished.push(...ids));
    const delivery: NewWebhookDelivery = {
      id: randomUUID(),
      endpointId,
      event: "job.completed",
      payload: { event: "job.completed", timestamp: "2026-01-01T00:00:00.000Z", data: {}, metadata: {} },
      maxAttempts: 3,
    };
    const result = await backend.steps.completeInTransaction(
      refOf(job),
      (tx) => {
        insertOrder(tx);
        return { approved: true };
      },
      (value) => doneItem(job, value, { deliveries: [delivery] }),
    );
    expect(result).toEqual({ applied: true, value: { approved: true } });
    expect(orders()).toBe(1);
    const row = await backend.jobs.get(job.id);
    expect(row?.status).toBe("done");
    expect(row?.result).toEqual({ approved: true });
    expect(row?.expiresAt).not.toBeNull();
    expect(count("SELECT COUNT(*) AS n FROM soniq_webhook_deliveries WHERE id = ?", delivery.id)).toBe(1);
    await eventually(() => expect(finished).toEqual([job.id]));
  });

  it("sqlite/steps-complete-fence: a job cancelled meanwhile keeps its status and the write is rolled back", async () => {
    const job = await claimed();
    await backend.jobs.cancel(job.id);
    const result = await backend.steps.completeInTransaction(
      refOf(job),
      (tx) => {
        insertOrder(tx);
        return 1;
      },
      (value) => doneItem(job, value),
    );
    expect(result).toEqual({ applied: false, value: 1 });
    expect(orders()).toBe(0);
    expect(jobRow(job.id)?.status).toBe("cancelled");
    // Another worker's claim fences it too.
    const other = await claimed();
    const byOther = await backend.steps.completeInTransaction(
      refOf(other, { workerId: "other" }),
      () => 2,
      (value) => doneItem(other, value),
    );
    expect(byOther.applied).toBe(false);
    expect(jobRow(other.id)?.status).toBe("processing");
  });

  it("sqlite/steps-complete-async: an async function is refused and the job stays processing", async () => {
    const job = await claimed();
    const err = await backend.steps
      .completeInTransaction(
        refOf(job),
        async (tx) => {
          insertOrder(tx);
          return 1;
        },
        (value) => doneItem(job, value),
      )
      .catch(rejected);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect(orders()).toBe(0);
    expect(jobRow(job.id)?.status).toBe("processing");
  });

  it("sqlite/steps-complete-flow: a flow step's completion releases its dependents in the same transaction", async () => {
    const { Soniq } = await import("@soniq/core");
    const soniq = new Soniq({ backend });
    soniq.job("orders.charge", async () => null);
    soniq.job("orders.ship", async () => null);
    const { id: flowId } = await soniq.flows.start({
      steps: { charge: { job: "orders.charge" }, ship: { job: "orders.ship", dependsOn: ["charge"] } },
    });
    const [charge] = (await backend.runs.claim({ queues: null, limit: 1, workerId: "w" })).jobs;
    if (charge === undefined) throw new Error("expected the flow's root job");
    const result = await backend.steps.completeInTransaction(
      refOf(charge),
      () => ({ charged: true }),
      (value) => doneItem(charge, value, { flow: { flowId, stepRef: "charge", add: [] } }),
    );
    expect(result.applied).toBe(true);
    const flow = await backend.flows.get(flowId);
    expect(flow?.steps.map((s) => [s.ref, s.state])).toEqual([
      ["charge", "done"],
      ["ship", "queued"],
    ]);
  });
});

describe("sqlite/steps wait", () => {
  it("sqlite/steps-sleep-suspends: a far wake time sends the job back to queued, due then, its attempt given back", async () => {
    const job = await claimed();
    const before = Date.now();
    const result = await backend.steps.wait(refOf(job), sleep("grace", 60_000), 1000);
    if (result.state !== "waiting") throw new Error(`expected waiting, got ${result.state}`);
    expect(result.suspended).toBe(true);
    expect(result.wakeAt.getTime()).toBeGreaterThanOrEqual(before + 60_000 - 5);
    expect(result.remainingMs).toBeGreaterThan(59_000);
    expect(jobRow(job.id)).toMatchObject({
      status: "queued",
      attempts: job.attempts - 1,
      worker_id: null,
      scheduled_at: result.wakeAt.getTime(),
    });
    const [step] = await backend.steps.list(job.id);
    expect(step).toMatchObject({ name: "grace", kind: "sleep", state: "waiting", finishedAt: null });
    expect(step?.wakeAt?.getTime()).toBe(result.wakeAt.getTime());
    // Not due: nothing to claim.
    expect((await backend.runs.claim({ queues: null, limit: 1, workerId: "w" })).jobs).toEqual([]);
  });

  it("sqlite/steps-sleep-kept: a later attempt never stretches the sleep, and it is done once the wake time passed", async () => {
    const job = await claimed();
    const first = await backend.steps.wait(refOf(job), sleep("grace", 60_000), 1000);
    if (first.state !== "waiting") throw new Error("expected waiting");
    const again = await reclaimed(job.id);
    expect(again.attempts).toBe(job.attempts); // the sleep spent no attempt
    const second = await backend.steps.wait(refOf(again), sleep("grace", 120_000), 1000);
    if (second.state !== "waiting") throw new Error("expected waiting");
    expect(second.wakeAt.getTime()).toBe(first.wakeAt.getTime());
    const third = await reclaimed(job.id);
    db.prepare("UPDATE soniq_job_steps SET wake_at = ? WHERE job_id = ?").run(Date.now() - 1, job.id);
    expect(await backend.steps.wait(refOf(third), sleep("grace", 60_000), 1000)).toEqual({
      state: "done",
      value: null,
    });
    expect((await backend.steps.list(job.id))[0]).toMatchObject({ kind: "sleep", state: "done" });
    expect(jobRow(job.id)?.status).toBe("processing");
  });

  it("sqlite/steps-sleep-in-process: a near wake time waits in process, the job kept, then is done", async () => {
    const job = await claimed();
    const first = await backend.steps.wait(refOf(job), sleep("blink", 40), 1000);
    expect(first).toMatchObject({ state: "waiting", suspended: false });
    expect(jobRow(job.id)?.status).toBe("processing");
    expect((await backend.steps.list(job.id))[0]).toMatchObject({ state: "waiting" });
    await eventually(async () => {
      expect(await backend.steps.wait(refOf(job), sleep("blink", 40), 1000)).toEqual({
        state: "done",
        value: null,
      });
    });
    expect(jobRow(job.id)?.status).toBe("processing");
  });

  it("sqlite/steps-wait-signal-oldest: buffered signals are consumed oldest first, each exactly once", async () => {
    const job = await claimed();
    for (const n of [1, 2, 3]) {
      expect(await backend.steps.signal(signalTo(job.id, "approval", { n }))).toEqual({
        outcome: "stored",
        woke: false,
        deadLetter: false,
      });
    }
    const ref = refOf(job);
    expect(await backend.steps.wait(ref, waitFor("approval"), 1000)).toEqual({
      state: "done",
      value: { n: 1 },
    });
    expect(await backend.steps.wait(ref, waitFor("approval#2"), 1000)).toEqual({
      state: "done",
      value: { n: 2 },
    });
    // A stored checkpoint answers again without consuming anything.
    expect(await backend.steps.wait(ref, waitFor("approval"), 1000)).toEqual({
      state: "done",
      value: { n: 1 },
    });
    expect(signalRows(job.id).map((r) => [JSON.parse(r.payload), r.consumed_by])).toEqual([
      [{ n: 1 }, "approval"],
      [{ n: 2 }, "approval#2"],
      [{ n: 3 }, null],
    ]);
    const steps = await backend.steps.list(job.id);
    expect(steps.map((s) => [s.name, s.kind, s.state, s.value])).toEqual([
      ["approval", "signal", "done", { n: 1 }],
      ["approval#2", "signal", "done", { n: 2 }],
    ]);
  });

  it("sqlite/steps-wait-signal-same-ms: signals of one millisecond are consumed in the order they were sent, whatever their ids", async () => {
    const job = await claimed();
    for (const n of [1, 2, 3, 4, 5]) {
      await backend.steps.signal({ ...signalTo(job.id, "go", n), id: randomUUID() });
    }
    db.prepare("UPDATE soniq_job_signals SET created_at = 1000 WHERE job_id = ?").run(job.id);
    const values: unknown[] = [];
    for (const name of ["go", "go#2", "go#3", "go#4", "go#5"]) {
      const result = await backend.steps.wait(refOf(job), waitFor(name), 1000);
      values.push(result.state === "done" ? result.value : result.state);
    }
    expect(values).toEqual([1, 2, 3, 4, 5]);
  });

  it("sqlite/steps-wait-timed-out: a deadline passed without a signal is timed_out, and stays so", async () => {
    const job = await claimed();
    const first = await backend.steps.wait(refOf(job), waitFor("approval", 60_000), 1000);
    expect(first).toMatchObject({ state: "waiting", suspended: true });
    const again = await reclaimed(job.id);
    db.prepare("UPDATE soniq_job_steps SET wake_at = ? WHERE job_id = ?").run(Date.now() - 1, job.id);
    expect(await backend.steps.wait(refOf(again), waitFor("approval"), 1000)).toEqual({ state: "timed_out" });
    // A signal arriving later stays for a later wait; the timed-out one never consumes it.
    await backend.steps.signal(signalTo(job.id, "approval", "late"));
    expect(await backend.steps.wait(refOf(again), waitFor("approval"), 1000)).toEqual({ state: "timed_out" });
    expect(await backend.steps.wait(refOf(again), waitFor("approval#2"), 1000)).toEqual({
      state: "done",
      value: "late",
    });
    expect((await backend.steps.list(job.id)).map((s) => [s.name, s.state])).toEqual([
      ["approval", "timed_out"],
      ["approval#2", "done"],
    ]);
  });

  it("sqlite/steps-wait-lost: a broken fence writes nothing and leaves the job alone", async () => {
    const job = await claimed();
    expect(await backend.steps.wait(refOf(job, { attempt: 9 }), sleep("s", 60_000), 1000)).toEqual({
      state: "lost",
    });
    expect(await backend.steps.wait(refOf(job, { workerId: "other" }), waitFor("a"), 1000)).toEqual({
      state: "lost",
    });
    expect(await backend.steps.list(job.id)).toEqual([]);
    expect(jobRow(job.id)).toMatchObject({ status: "processing", attempts: 1, worker_id: "w" });
  });

  it("sqlite/steps-suspend-gives-up-keys: a suspended job gives up a dedup key another queued job took", async () => {
    const job = await claimed({ dedupKey: "k" });
    const twin = newJob({ dedupKey: "k" });
    expect(await backend.jobs.enqueue(twin, {})).toEqual({ id: twin.id, deduplicated: false });
    expect(await backend.steps.wait(refOf(job), sleep("s", 60_000), 1000)).toMatchObject({ suspended: true });
    expect(jobRow(job.id)?.status).toBe("queued");
    expect((await backend.jobs.get(job.id))?.dedupKey).toBeNull();
  });
});

describe("sqlite/steps signal", () => {
  it("sqlite/steps-signal-targets: unknown id, done and cancelled jobs", async () => {
    expect(await backend.steps.signal(signalTo(randomUUID(), "a", null))).toEqual({ outcome: "not_found" });
    const job = await claimed();
    await backend.runs.settle(
      [{ kind: "done", id: job.id, attempt: 1, result: null, resultTtlMs: 60_000 }],
      "w",
    );
    expect(await backend.steps.signal(signalTo(job.id, "a", null))).toEqual({
      outcome: "finished",
      status: "done",
    });
    const cancelled = newJob();
    await backend.jobs.enqueue(cancelled, {});
    await backend.jobs.cancel(cancelled.id);
    expect(await backend.steps.signal(signalTo(cancelled.id, "a", null))).toEqual({
      outcome: "finished",
      status: "cancelled",
    });
    expect(count("SELECT COUNT(*) AS n FROM soniq_job_signals")).toBe(0);
  });

  it("sqlite/steps-signal-key: a resend with the same key is a duplicate; null keys never are; audited when stored", async () => {
    const job = newJob();
    await backend.jobs.enqueue(job, {});
    const audit = () => auditRecord("job.signal", "ops", job.id, { name: "a" });
    expect(await backend.steps.signal(signalTo(job.id, "a", 1, "ticket-1"), audit())).toMatchObject({
      outcome: "stored",
    });
    expect(await backend.steps.signal(signalTo(job.id, "a", 2, "ticket-1"), audit())).toEqual({
      outcome: "duplicate",
    });
    // The same key on another job is another signal.
    const other = newJob();
    await backend.jobs.enqueue(other, {});
    expect(await backend.steps.signal(signalTo(other.id, "a", 1, "ticket-1"))).toMatchObject({
      outcome: "stored",
    });
    expect(await backend.steps.signal(signalTo(job.id, "a", 3))).toMatchObject({ outcome: "stored" });
    expect(await backend.steps.signal(signalTo(job.id, "a", 3))).toMatchObject({ outcome: "stored" });
    expect(signalRows(job.id).map((r) => JSON.parse(r.payload))).toEqual([1, 3, 3]);
    const entries = await backend.audit.list({ action: "job.signal", since: null, limit: 10 });
    expect(entries.map((e) => e.target)).toEqual([job.id]);
  });

  it("sqlite/steps-signal-wakes: a queued job waiting on the name is made due now and a worker woken", async () => {
    const job = await claimed();
    const queues: string[] = [];
    await backend.wakeUps.subscribe((queue) => queues.push(queue));
    expect(await backend.steps.wait(refOf(job), waitFor("approval#2"), 1000)).toMatchObject({
      suspended: true,
    });
    // Another name, or a name that only starts like it, wakes nothing.
    expect(await backend.steps.signal(signalTo(job.id, "approv", 0))).toMatchObject({ woke: false });
    expect(await backend.steps.signal(signalTo(job.id, "other", 0))).toMatchObject({ woke: false });
    expect(jobRow(job.id)?.scheduled_at).toBeGreaterThan(Date.now() + 30_000);
    const before = Date.now();
    expect(await backend.steps.signal(signalTo(job.id, "approval", { by: "ops" }))).toEqual({
      outcome: "stored",
      woke: true,
      deadLetter: false,
    });
    expect(jobRow(job.id)?.scheduled_at).toBeLessThanOrEqual(Date.now());
    expect(jobRow(job.id)?.scheduled_at).toBeGreaterThanOrEqual(before - 5);
    await eventually(() => expect(queues).toEqual([job.queue]));
    const [again] = (await backend.runs.claim({ queues: null, limit: 1, workerId: "w" })).jobs;
    expect(again?.id).toBe(job.id);
    if (again === undefined) return;
    expect(await backend.steps.wait(refOf(again), waitFor("approval#2"), 1000)).toEqual({
      state: "done",
      value: { by: "ops" },
    });
  });

  it("sqlite/steps-signal-processing: a signal to a running job is stored for its next wait, nothing woken", async () => {
    const job = await claimed();
    expect(await backend.steps.signal(signalTo(job.id, "approval", 7))).toEqual({
      outcome: "stored",
      woke: false,
      deadLetter: false,
    });
    expect(jobRow(job.id)?.status).toBe("processing");
    expect(await backend.steps.wait(refOf(job), waitFor("approval"), 1000)).toEqual({
      state: "done",
      value: 7,
    });
  });

  it("sqlite/steps-signal-dead-letter: stored on the dead letter, then moved by its replay and consumed there", async () => {
    const job = await claimed();
    await deadLettered(job);
    expect(await backend.steps.signal(signalTo(job.id, "approval", "late"))).toEqual({
      outcome: "stored",
      woke: false,
      deadLetter: true,
    });
    expect(signalRows(job.id)).toHaveLength(1);
    const newId = newJobId();
    expect(await replay(job.id, newId)).toBe(newId);
    expect(signalRows(job.id)).toEqual([]);
    expect(signalRows(newId)).toHaveLength(1);
    const [replayed] = (await backend.runs.claim({ queues: null, limit: 1, workerId: "w" })).jobs;
    if (replayed?.id !== newId) throw new Error("expected the replayed job");
    expect(await backend.steps.wait(refOf(replayed), waitFor("approval"), 1000)).toEqual({
      state: "done",
      value: "late",
    });
  });
});

function replay(
  id: string,
  newId: string,
  steps?: { keep: boolean; resolve: { name: string; value: unknown }[] },
) {
  return backend.deadLetters.replay(id, {
    newId,
    queue: null,
    priority: null,
    scheduledAt: null,
    traceId: null,
    traceContext: null,
    ...(steps === undefined ? {} : { steps }),
  });
}

describe("sqlite/steps dead letters", () => {
  /** A dead letter with `charge` done, `ship` failed, a consumed and an unconsumed signal. */
  async function deadLetterWithSteps(): Promise<Job> {
    const job = await claimed();
    const ref = refOf(job);
    await backend.steps.save(ref, done("charge", { paymentId: "p1" }));
    await backend.steps.signal(signalTo(job.id, "approval", "used"));
    await backend.steps.wait(ref, waitFor("approval"), 1000);
    await backend.steps.save(ref, {
      name: "ship",
      state: "failed",
      value: null,
      error: "boom",
      startedAt: new Date(),
    });
    await backend.steps.signal(signalTo(job.id, "approval", "pending"));
    await deadLettered(job);
    return job;
  }

  const summary = async (id: string) =>
    (await backend.steps.list(id)).map((s) => [s.name, s.state, s.value, s.attempt]);

  it("sqlite/steps-replay-keep: by default the done checkpoints and unconsumed signals move to the new job", async () => {
    const job = await deadLetterWithSteps();
    const newId = newJobId();
    await replay(job.id, newId);
    expect(await summary(newId)).toEqual([
      ["charge", "done", { paymentId: "p1" }, 1],
      ["approval", "done", "used", 1],
    ]);
    expect(await summary(job.id)).toEqual([["ship", "failed", null, 1]]);
    expect(signalRows(newId).map((r) => [r.payload, r.consumed_by])).toEqual([['"pending"', null]]);
    expect(signalRows(job.id).map((r) => [r.payload, r.consumed_by])).toEqual([['"used"', "approval"]]);
    // The same with steps given explicitly.
    const second = newJobId();
    const other = await deadLetterWithSteps();
    await replay(other.id, second, { keep: true, resolve: [] });
    expect((await summary(second)).map((s) => s[0])).toEqual(["charge", "approval"]);
  });

  it("sqlite/steps-replay-discard: keep false starts clean; signals still move", async () => {
    const job = await deadLetterWithSteps();
    const newId = newJobId();
    await replay(job.id, newId, { keep: false, resolve: [] });
    expect(await summary(newId)).toEqual([]);
    expect((await summary(job.id)).map((s) => s[0])).toEqual(["charge", "approval", "ship"]);
    expect(signalRows(newId)).toHaveLength(1);
  });

  it("sqlite/steps-replay-resolve: resolved steps are recorded done with the operator's value, attempt 0", async () => {
    const job = await deadLetterWithSteps();
    const newId = newJobId();
    await replay(job.id, newId, {
      keep: true,
      resolve: [
        { name: "ship", value: { tracking: "manual-1" } },
        { name: "charge", value: { paymentId: "manual" } },
      ],
    });
    expect(await summary(newId)).toEqual([
      ["charge", "done", { paymentId: "manual" }, 0],
      ["approval", "done", "used", 1],
      ["ship", "done", { tracking: "manual-1" }, 0],
    ]);
    const ship = (await backend.steps.list(newId)).find((s) => s.name === "ship");
    expect(ship).toMatchObject({ kind: "step", error: null, wakeAt: null });
    expect(ship?.startedAt).toBeInstanceOf(Date);
    expect(ship?.finishedAt).toBeInstanceOf(Date);
    // Discard with resolve: only the resolved ones.
    const other = await deadLetterWithSteps();
    const second = newJobId();
    await replay(other.id, second, { keep: false, resolve: [{ name: "ship", value: 1 }] });
    expect(await summary(second)).toEqual([["ship", "done", 1, 0]]);
  });

  it("sqlite/steps-replay-missing: a replay of no dead letter moves nothing", async () => {
    const job = await claimed();
    await backend.steps.save(refOf(job), done("a", 1));
    expect(await replay(job.id, newJobId())).toBeNull();
    expect(await summary(job.id)).toEqual([["a", "done", 1, 1]]);
  });

  it("sqlite/steps-purge: purging a dead letter deletes its checkpoints and signals, nobody else's", async () => {
    const job = await deadLetterWithSteps();
    const other = await claimed();
    await backend.steps.save(refOf(other), done("a", 1));
    await backend.steps.signal(signalTo(other.id, "s", 1));
    expect(await backend.deadLetters.purge(job.id)).toBe(true);
    expect(await backend.steps.list(job.id)).toEqual([]);
    expect(signalRows(job.id)).toEqual([]);
    expect(await backend.steps.list(other.id)).toHaveLength(1);
    expect(signalRows(other.id)).toHaveLength(1);
    expect(await backend.deadLetters.purge(job.id)).toBe(false);
  });
});

describe("sqlite/steps retention", () => {
  it("sqlite/steps-delete-expired: checkpoints and signals of jobs gone from both tables are deleted", async () => {
    // Completed with resultTtlMs 0: the job row is deleted at once.
    const gone = await claimed();
    await backend.steps.save(refOf(gone), done("a", 1));
    await backend.steps.signal(signalTo(gone.id, "s", 1));
    await backend.runs.settle([{ kind: "done", id: gone.id, attempt: 1, result: null, resultTtlMs: 0 }], "w");
    // Expired by the sweep itself.
    const expired = await claimed();
    await backend.steps.save(refOf(expired), done("a", 1));
    await backend.runs.settle(
      [{ kind: "done", id: expired.id, attempt: 1, result: null, resultTtlMs: 1 }],
      "w",
    );
    db.prepare("UPDATE soniq_jobs SET expires_at = 0 WHERE id = ?").run(expired.id);
    // Kept: a live job's and a dead letter's.
    const live = await claimed();
    await backend.steps.save(refOf(live), done("a", 1));
    await backend.steps.signal(signalTo(live.id, "s", 1));
    const dead = await claimed();
    await backend.steps.save(refOf(dead), done("a", 1));
    await backend.steps.signal(signalTo(dead.id, "s", 1));
    await deadLettered(dead);

    expect(await backend.jobs.deleteExpired()).toBe(1);
    const left = (table: string) =>
      (db.prepare(`SELECT DISTINCT job_id FROM ${table} ORDER BY job_id`).all() as { job_id: string }[]).map(
        (r) => r.job_id,
      );
    expect(left("soniq_job_steps")).toEqual([live.id, dead.id].sort());
    expect(left("soniq_job_signals")).toEqual([live.id, dead.id].sort());
  });
});

describe("sqlite/steps race", () => {
  it("sqlite/steps-race-processes: signals from another process racing waits are each consumed once, no job stranded", async () => {
    const jobs = Array.from({ length: 30 }, () => newJob());
    await backend.jobs.enqueueMany(jobs, {});
    const ids = jobs.map((j) => j.id);
    const child = runFixture("signal-child", [file, JSON.stringify(ids)]);
    await child.waitFor("READY");
    child.send("go");

    // The handler of every job: waitForSignal("go") twice, then done. inProcessMs 0: every wait not answered at
    // once suspends the job, so each signal either meets the wait or wakes the suspended job.
    const finished = new Set<string>();
    const deadline = Date.now() + 45_000;
    while (finished.size < ids.length) {
      if (Date.now() > deadline) {
        throw new Error(`stranded: ${ids.filter((id) => !finished.has(id)).length} jobs never finished`);
      }
      const claimedJobs = (await backend.runs.claim({ queues: null, limit: 10, workerId: "w" })).jobs;
      if (claimedJobs.length === 0) {
        await delay(2);
        continue;
      }
      for (const job of claimedJobs) {
        let suspended = false;
        for (const name of ["go", "go#2"]) {
          const result = await backend.steps.wait(refOf(job), waitFor(name), 0);
          if (result.state === "waiting") {
            expect(result.suspended).toBe(true);
            suspended = true;
            break;
          }
          expect(result.state).toBe("done");
          // The handler's own work between its waits: signals also land while the job is processing.
          await delay(Math.floor(Math.random() * 3));
        }
        if (suspended) continue;
        const [applied] = await backend.runs.settle(
          [{ kind: "done", id: job.id, attempt: job.attempts, result: null, resultTtlMs: 60_000 }],
          "w",
        );
        expect(applied).toBe(true);
        expect(job.attempts).toBe(1); // a wait spends no attempt
        finished.add(job.id);
      }
    }
    const exited = await child.exited;
    expect(exited.code, exited.stderr).toBe(0);
    const sent = JSON.parse(
      exited.stdout
        .split("\n")
        .find((l) => l.startsWith("SENT "))
        ?.slice(5) ?? "{}",
    ) as Record<string, number>;
    expect((sent.stored ?? 0) + (sent.woke ?? 0)).toBe(2 * ids.length);

    for (const id of ids) {
      expect(signalRows(id).map((r) => [JSON.parse(r.payload).n, r.consumed_by])).toEqual([
        [1, "go"],
        [2, "go#2"],
      ]);
      expect(
        (await backend.steps.list(id)).map((s) => [s.name, s.state, (s.value as { n: number }).n]),
      ).toEqual([
        ["go", "done", 1],
        ["go#2", "done", 2],
      ]);
    }
  }, 60_000);

  it("sqlite/steps-race-connections: two connections to one file interleaving signals and waits", async () => {
    const peer = sqliteBackend({ filename: file });
    try {
      const jobs = Array.from({ length: 20 }, () => newJob());
      await backend.jobs.enqueueMany(jobs, {});
      const signaller = (async () => {
        for (const job of [...jobs].reverse()) {
          expect((await peer.steps.signal(signalTo(job.id, "go", job.id))).outcome).toBe("stored");
          await delay(1);
        }
      })();
      const finished = new Set<string>();
      const deadline = Date.now() + 20_000;
      while (finished.size < jobs.length && Date.now() < deadline) {
        const batch = (await backend.runs.claim({ queues: null, limit: 5, workerId: "w" })).jobs;
        if (batch.length === 0) await delay(1);
        for (const job of batch) {
          const result = await backend.steps.wait(refOf(job), waitFor("go"), 0);
          if (result.state === "waiting") continue;
          expect(result).toEqual({ state: "done", value: job.id });
          await backend.runs.settle(
            [{ kind: "done", id: job.id, attempt: job.attempts, result: null, resultTtlMs: 60_000 }],
            "w",
          );
          finished.add(job.id);
        }
      }
      await signaller;
      expect(finished.size).toBe(jobs.length);
      expect(count("SELECT COUNT(*) AS n FROM soniq_job_signals WHERE consumed_at IS NULL")).toBe(0);
    } finally {
      await peer.close();
    }
  }, 30_000);
});
