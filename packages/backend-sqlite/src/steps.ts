/**
 * The steps facet (DESIGN.md section 19): a job's checkpoints (`soniq_job_steps`) and its signal mailbox
 * (`soniq_job_signals`). Every call is one IMMEDIATE transaction on the backend's connection: the write lock is
 * taken before the first read, so between the fence's read of the job's row (processing, the claim's attempt and
 * worker) and the commit no cancel, recovery, claim or signal from any process can change it.
 *
 * - `save`: the fence and the upsert are one `INSERT ... SELECT ... FROM soniq_jobs WHERE <fence>`, so a step costs
 *   one statement and one commit.
 * - `saveInTransaction` / `completeInTransaction`: BEGIN IMMEDIATE, the application's function on the
 *   connection (synchronous, as better-sqlite3's own transactions), then the fenced write: the checkpoint, or the
 *   job's done as `runs.settle` writes it (internal/settle.ts). A broken fence rolls the function's writes back.
 * - `wait` and `signal` are core's programs (`runWaitSync`, `runSignalSync`) over the two stores below: the rules
 *   live in core, these only read and write rows.
 */
import {
  type AuditRecord,
  type DoneSettlement,
  type JobStatus,
  runSignalSync,
  runWaitSync,
  type SignalRequest,
  type SignalResult,
  type SignalStore,
  SoniqError,
  type StepRef,
  type StepsFacet,
  type StepWrite,
  type WaitStore,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { translateError } from "./internal/errors.js";
import { FENCE, type SettleBatch, settleBatch } from "./internal/settle.js";
import { jsonOrNull, NOW, RELEASE_TAKEN_KEYS } from "./internal/sql.js";
import {
  NEXT_SEQ,
  STEP_COLUMNS,
  type StepRecord,
  toJobStep,
  UPSERT_STEP,
  writeStep,
} from "./internal/step-rows.js";
import type { SqliteTx } from "./internal/tx.js";

export function stepsFacet(ctx: SqliteContext): StepsFacet<SqliteTx> {
  const waits = waitStore(ctx);
  return {
    list: (jobId) =>
      runSync("steps.list", () => (ctx.statement(LIST).all(jobId) as StepRecord[]).map(toJobStep)),
    save: (ref, write) =>
      runSync("steps.save", () => {
        const params = saveParams(ref, write);
        return immediate(ctx, () => ctx.statement(SAVE).run(params).changes > 0);
      }),
    saveInTransaction: (ref, fn, write) =>
      withFunction("steps.saveInTransaction", () =>
        inTransaction(ctx, fn, (value) => ctx.statement(SAVE).run(saveParams(ref, write(value))).changes > 0),
      ),
    completeInTransaction: (ref, fn, done) =>
      withFunction("steps.completeInTransaction", () => {
        let batch: SettleBatch | undefined;
        const result = inTransaction(ctx, fn, (value) => {
          const item: DoneSettlement = { ...done(value), id: ref.id, attempt: ref.attempt };
          batch = settleBatch(ctx, [item], ref.workerId);
          return batch.write()[0] === true;
        });
        if (result.applied) batch?.announce([true]);
        return result;
      }),
    wait: (ref, request, inProcessMs) =>
      runSync("steps.wait", () => immediate(ctx, () => runWaitSync(waits, ref, request, inProcessMs))),
    signal: (request, audit) => runSync("steps.signal", () => signal(ctx, request, audit)),
  };
}

const LIST = `SELECT ${STEP_COLUMNS} FROM soniq_job_steps WHERE job_id = ? ORDER BY seq`;

// The SELECT's WHERE also keeps SQLite from reading the upsert's ON as a join's.
const SAVE = `INSERT INTO soniq_job_steps (job_id, name, seq, kind, state, value, error, attempt, started_at,
    finished_at, wake_at)
  SELECT @id, @name, ${NEXT_SEQ}, 'step', @state, @value, @error, @attempt, @startedAt, ${NOW}, NULL
  FROM soniq_jobs WHERE ${FENCE}
  ${UPSERT_STEP}`;

/** A step checkpoint's parameters: its value encoded here, before anything is written. */
function saveParams(ref: StepRef, write: StepWrite) {
  return {
    id: ref.id,
    attempt: ref.attempt,
    workerId: ref.workerId,
    name: write.name,
    state: write.state,
    value: jsonOrNull(write.value, "value"),
    error: write.error,
    startedAt: write.startedAt.getTime(),
  };
}

/** The application's function threw: rethrown as it is once its transaction rolled back, never translated. */
class FunctionThrew {
  constructor(readonly error: unknown) {}
}

/** The fence broke after the function ran: thrown to roll its transaction back, answered `applied: false`. */
class FenceBroken {
  constructor(readonly value: unknown) {}
}

/** `runSync` for the transactional steps: the application's own error passes through untouched. */
function withFunction<T>(operation: string, body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (err) {
    return Promise.reject(err instanceof FunctionThrew ? err.error : translateError(err, operation));
  }
}

/**
 * BEGIN IMMEDIATE (a SAVEPOINT when the connection is already in a transaction), `fn` on the connection, then
 * `fenced(value)`, the fenced write: false rolls everything back and answers `applied: false` with the value.
 */
function inTransaction<T>(
  ctx: SqliteContext,
  fn: (tx: SqliteTx) => T | Promise<T>,
  fenced: (value: T) => boolean,
): { applied: boolean; value: T } {
  try {
    return immediate(ctx, () => {
      const value = callSynchronously(ctx, fn);
      if (!fenced(value)) throw new FenceBroken(value);
      return { applied: true, value };
    });
  } catch (err) {
    if (err instanceof FenceBroken) return { applied: false, value: err.value as T };
    throw err;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * better-sqlite3's transactions are synchronous: whatever an async function does after its first `await` would
 * run after the COMMIT, outside the transaction. Its promise is refused (and everything before rolled back).
 */
function callSynchronously<T>(ctx: SqliteContext, fn: (tx: SqliteTx) => T | Promise<T>): T {
  let value: T | Promise<T>;
  try {
    value = fn(ctx.db);
  } catch (error) {
    throw new FunctionThrew(error);
  }
  if (!isThenable(value)) return value;
  // Nobody awaits it now: its rejection must not surface as an unhandled one.
  Promise.resolve(value).catch(() => undefined);
  throw new SoniqError(
    "SONIQ_INVALID_ARGUMENT",
    "A transactional step on SQLite runs inside a better-sqlite3 transaction, which is synchronous: the " +
      "function returned a promise. Make it synchronous (no async, no await), and do the async work before " +
      "or after the step; nothing it wrote before its first await was kept.",
    { context: { field: "fn" } },
  );
}

const HOLD = `SELECT ${NOW} AS now FROM soniq_jobs WHERE ${FENCE}`;
const READ_STEP = `SELECT ${STEP_COLUMNS} FROM soniq_job_steps WHERE job_id = ? AND name = ?`;
/**
 * Oldest first: by `created_at`, then by `rowid`, which grows with insertion (a signal id is any UUID, so two
 * signals of one millisecond would otherwise come back in random order). The index (job_id, name, created_at)
 * holds its entries in exactly this order (rowid is its hidden last key): no sort.
 */
const TAKE_SIGNAL = `UPDATE soniq_job_signals SET consumed_at = @now, consumed_by = @by
  WHERE rowid = (SELECT rowid FROM soniq_job_signals
    WHERE job_id = @jobId AND name = @name AND consumed_at IS NULL ORDER BY created_at, rowid LIMIT 1)
  RETURNING payload`;
// Back to queued as a requeue goes: a dedup_key or unique args another queued job took meanwhile are given up.
const SUSPEND = `UPDATE soniq_jobs
  SET status = 'queued', scheduled_at = @wakeAt, attempts = @attempts, worker_id = NULL, updated_at = ${NOW},
    ${RELEASE_TAKEN_KEYS}
  WHERE id = @id`;

/** Inside `wait`'s IMMEDIATE transaction: the write lock it holds is the row lock `hold` stands for. */
function waitStore(ctx: SqliteContext): WaitStore {
  return {
    hold: (ref) => {
      const row = ctx.statement(HOLD).get({ id: ref.id, attempt: ref.attempt, workerId: ref.workerId }) as
        | { now: number }
        | undefined;
      return row === undefined ? null : new Date(row.now);
    },
    readStep: (jobId, name) => {
      const row = ctx.statement(READ_STEP).get(jobId, name) as StepRecord | undefined;
      return row === undefined ? null : toJobStep(row);
    },
    writeStep: (jobId, step) => writeStep(ctx, jobId, step),
    takeSignal: (jobId, signal, consumedBy, now) => {
      const row = ctx
        .statement(TAKE_SIGNAL)
        .get({ jobId, name: signal, by: consumedBy, now: now.getTime() }) as
        | { payload: string | null }
        | undefined;
      return row === undefined ? null : { payload: row.payload === null ? null : JSON.parse(row.payload) };
    },
    suspend: (jobId, wakeAt, attempts) => {
      ctx.statement(SUSPEND).run({ id: jobId, wakeAt: wakeAt.getTime(), attempts });
    },
  };
}

const TARGET = `SELECT COALESCE((SELECT status FROM soniq_jobs WHERE id = @id),
  (SELECT 'dead_letter' FROM soniq_dead_letter_jobs WHERE id = @id)) AS target`;
// A null key never conflicts (NULLs are distinct in the unique index).
const INSERT_SIGNAL = `INSERT INTO soniq_job_signals (id, job_id, name, payload, key, created_at)
  VALUES (@id, @jobId, @name, @payload, @key, ${NOW})
  ON CONFLICT (job_id, key) DO NOTHING`;
const WAITING_FOR = `SELECT EXISTS (SELECT 1 FROM soniq_job_steps
  WHERE job_id = @jobId AND kind = 'signal' AND state = 'waiting'
    AND (name = @signal OR substr(name, 1, length(@signal) + 1) = @signal || '#')) AS waiting`;
// A job already due keeps its place.
const WAKE = `UPDATE soniq_jobs SET scheduled_at = MIN(scheduled_at, ${NOW}), updated_at = ${NOW}
  WHERE id = ? AND status = 'queued' RETURNING queue`;

/** Inside `signal`'s IMMEDIATE transaction; `woken` collects the queues to wake once it committed. */
function signalStore(ctx: SqliteContext, payload: string | null, woken: string[]): SignalStore {
  return {
    lockTarget: (jobId) =>
      (ctx.statement(TARGET).get({ id: jobId }) as { target: JobStatus | "dead_letter" | null }).target,
    insertSignal: (request) =>
      ctx.statement(INSERT_SIGNAL).run({
        id: request.id,
        jobId: request.jobId,
        name: request.name,
        payload,
        key: request.key,
      }).changes > 0,
    waitingFor: (jobId, signal) =>
      (ctx.statement(WAITING_FOR).get({ jobId, signal }) as { waiting: number }).waiting === 1,
    wake: (jobId) => {
      const row = ctx.statement(WAKE).get(jobId) as { queue: string } | undefined;
      if (row !== undefined) woken.push(row.queue);
    },
    audit: (record: AuditRecord) => writeAudit(ctx, record),
  };
}

function signal(ctx: SqliteContext, request: SignalRequest, audit: AuditRecord | undefined): SignalResult {
  const payload = jsonOrNull(request.payload, "payload");
  const woken: string[] = [];
  const result = immediate(ctx, () => runSignalSync(signalStore(ctx, payload, woken), request, audit));
  for (const queue of woken) ctx.notify(queue);
  return result;
}
