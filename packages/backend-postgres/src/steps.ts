/**
 * The steps facet (capability `steps`, DESIGN.md section 19): a job's checkpoints (`soniq_job_steps`) and its
 * signal mailbox (`soniq_job_signals`). Core decides names, limits and what a handler sees; this file stores,
 * fences and suspends (the SQL of the rows: internal/step-rows.ts).
 *
 * - `save`: ONE named statement (a step costs one round trip): the job's row read `FOR SHARE` under the run's
 *   fence, the checkpoint upserted from it.
 * - `saveInTransaction` / `completeInTransaction`: the application's writes on a pool client inside BEGIN
 *   (internal/tx.ts `applicationTransaction`), then the same fenced upsert, or the job's done settlement as
 *   `runs.settle` applies it (internal/settle-tx.ts), on that client; a broken fence rolls it all back. No lock
 *   is taken before the user's function ran.
 * - `wait` and `signal`: core's programs (`runWaitAsync`, `runSignalAsync`) over a store of this file's, in one
 *   transaction each. Both lock the job's row `FOR UPDATE` first, so a signal and a wait of one job run one after
 *   the other: a signal sent while a wait decides is either consumed by it or finds the job suspended and makes
 *   it due now.
 */
import {
  type AuditRecord,
  type JobStatus,
  type JobStep,
  runSignalAsync,
  runWaitAsync,
  type SignalRequest,
  type SignalResult,
  type SignalStore,
  type StepRef,
  type StepsFacet,
  type StepWrite,
  type WaitRequest,
  type WaitResult,
  type WaitStore,
} from "@soniq/core/backend";
import type pg from "pg";
import { writeAudit } from "./internal/audit-rows.js";
import { type PgContext, query } from "./internal/context.js";
import { isQueuedKeyConflict } from "./internal/errors.js";
import { NEW_JOB_CHANNEL } from "./internal/listen-client.js";
import { CLEAR_COLLIDING_KEYS, CLEAR_KEYS, KEEP_KEYS } from "./internal/requeue-keys.js";
import { type Row, toDate } from "./internal/rows.js";
import { settleInTransaction } from "./internal/settle-tx.js";
import {
  jsonParam,
  mapStep,
  RUN_FENCE,
  SAVE_STEP,
  STEP_COLUMNS,
  WRITE_STEP,
  writeStepValues,
} from "./internal/step-rows.js";
import { applicationTransaction, inTransaction, type PgTx } from "./internal/tx.js";

/** An `AsyncStore<S>` (core's program store type, each method answering a promise). */
type Async<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};

export function stepsFacet(ctx: PgContext): StepsFacet<PgTx> {
  return {
    list: (jobId) => list(ctx, jobId),
    save: (ref, write) => save(ctx, ref, write),
    saveInTransaction: (ref, fn, write) =>
      applicationTransaction(ctx, "steps.saveInTransaction", fn, (client, value) =>
        saveOn(client, ref, write(value)),
      ),
    completeInTransaction: (ref, fn, done) =>
      applicationTransaction(ctx, "steps.completeInTransaction", fn, async (client, value) => {
        const [applied] = await settleInTransaction(ctx, client, [done(value)], ref.workerId ?? undefined);
        return applied === true;
      }),
    wait: (ref, request, inProcessMs) => wait(ctx, ref, request, inProcessMs),
    signal: (request, audit) => signal(ctx, request, audit),
  };
}

async function list(ctx: PgContext, jobId: string): Promise<JobStep[]> {
  // On the primary: a run reads its checkpoints through it (a replica's lag would re-run a stored step).
  const res = await query<Row>(ctx, "steps.list", {
    name: "soniq_steps_list",
    text: `SELECT ${STEP_COLUMNS} FROM soniq_job_steps WHERE job_id = $1 ORDER BY seq, name`,
    values: [jobId],
  });
  return res.rows.map(mapStep);
}

function saveValues(ref: StepRef, write: StepWrite): unknown[] {
  return [
    ref.id,
    ref.attempt,
    ref.workerId,
    write.name,
    write.state,
    jsonParam(write.value),
    write.error,
    write.startedAt,
  ];
}

async function save(ctx: PgContext, ref: StepRef, write: StepWrite): Promise<boolean> {
  const res = await query(ctx, "steps.save", {
    name: "soniq_step_save",
    text: SAVE_STEP,
    values: saveValues(ref, write),
  });
  return (res.rowCount ?? 0) > 0;
}

/** The fenced upsert inside the application's transaction (unnamed: a named statement a pooler lost would abort it). */
async function saveOn(client: pg.ClientBase, ref: StepRef, write: StepWrite): Promise<boolean> {
  const res = await client.query(SAVE_STEP, saveValues(ref, write));
  return (res.rowCount ?? 0) > 0;
}

/**
 * The wait's store on the transaction's client. `suspend` puts the job back to `queued`, which can meet a queued
 * row that took its dedup key (or its unique name + args) while it ran: `keys` is the requeue form the attempt
 * runs with (internal/requeue-keys.ts), and a conflict runs the whole wait again with the next form.
 */
function waitStore(client: pg.ClientBase, keys: string): Async<WaitStore> {
  return {
    hold: async (ref) => {
      const res = await client.query<{ now: Date }>(
        // The time is read after the lock is held (clock_timestamp, outside the locking CTE): now() is the
        // transaction's start, which can precede a signal committed while this wait waited for the row.
        `WITH held AS (SELECT 1 FROM soniq_jobs WHERE ${RUN_FENCE} FOR UPDATE) SELECT clock_timestamp() AS now FROM held`,
        [ref.id, ref.attempt, ref.workerId],
      );
      const row = res.rows[0];
      return row === undefined ? null : toDate(row.now);
    },
    readStep: async (jobId, name) => {
      const res = await client.query<Row>(
        `SELECT ${STEP_COLUMNS} FROM soniq_job_steps WHERE job_id = $1 AND name = $2`,
        [jobId, name],
      );
      const row = res.rows[0];
      return row === undefined ? null : mapStep(row);
    },
    writeStep: async (jobId, step) => {
      await client.query(WRITE_STEP, writeStepValues(jobId, step));
    },
    takeSignal: async (jobId, name, consumedBy, now) => {
      // The job's row is held, so no other wait of this job reads the mailbox meanwhile.
      const res = await client.query<{ payload: unknown }>(
        `UPDATE soniq_job_signals SET consumed_at = $4, consumed_by = $3
          WHERE id = (SELECT id FROM soniq_job_signals WHERE job_id = $1 AND name = $2 AND consumed_at IS NULL
            ORDER BY created_at, id LIMIT 1)
          RETURNING payload`,
        [jobId, name, consumedBy, now],
      );
      const row = res.rows[0];
      return row === undefined ? null : { payload: row.payload ?? null };
    },
    suspend: async (jobId, wakeAt, attempts) => {
      await client.query(
        `UPDATE soniq_jobs SET status = 'queued', scheduled_at = $2, attempts = $3, worker_id = NULL,
          updated_at = now()${keys}
          WHERE id = $1`,
        [jobId, wakeAt, attempts],
      );
    },
  };
}

const SUSPEND_FORMS = [KEEP_KEYS, CLEAR_COLLIDING_KEYS, CLEAR_KEYS];

async function wait(
  ctx: PgContext,
  ref: StepRef,
  request: WaitRequest,
  inProcessMs: number,
): Promise<WaitResult> {
  for (let i = 0; ; i++) {
    try {
      return await inTransaction(ctx, "steps.wait", (client) =>
        runWaitAsync(waitStore(client, SUSPEND_FORMS[i] ?? CLEAR_KEYS), ref, request, inProcessMs),
      );
    } catch (err) {
      if (i >= SUSPEND_FORMS.length - 1 || !isQueuedKeyConflict(err)) throw err;
    }
  }
}

/** The signal's store on the transaction's client. */
function signalStore(client: pg.ClientBase): Async<SignalStore> {
  return {
    lockTarget: async (jobId) => {
      const res = await client.query<{ status: JobStatus }>(
        "SELECT status FROM soniq_jobs WHERE id = $1 FOR UPDATE",
        [jobId],
      );
      const row = res.rows[0];
      if (row !== undefined) return row.status;
      const dead = await client.query("SELECT 1 FROM soniq_dead_letter_jobs WHERE id = $1", [jobId]);
      return dead.rows.length > 0 ? "dead_letter" : null;
    },
    insertSignal: async (request: SignalRequest) => {
      // A null key never conflicts (NULLs are distinct in the unique index).
      const res = await client.query(
        `INSERT INTO soniq_job_signals (id, job_id, name, payload, key) VALUES ($1, $2, $3, $4::jsonb, $5)
          ON CONFLICT (job_id, key) DO NOTHING RETURNING 1`,
        [request.id, request.jobId, request.name, jsonParam(request.payload), request.key],
      );
      return (res.rowCount ?? 0) > 0;
    },
    waitingFor: async (jobId, name) => {
      const res = await client.query<{ waiting: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM soniq_job_steps WHERE job_id = $1 AND kind = 'signal' AND state = 'waiting'
          AND (name = $2 OR left(name, length($2) + 1) = $2 || '#')) AS waiting`,
        [jobId, name],
      );
      return res.rows[0]?.waiting === true;
    },
    wake: async (jobId) => {
      // Due now (never later than it was), and the enqueue path's wake-up, delivered when the transaction commits.
      await client.query(
        `WITH woken AS (UPDATE soniq_jobs SET scheduled_at = LEAST(scheduled_at, now()), updated_at = now()
            WHERE id = $1 AND status = 'queued' RETURNING queue)
          SELECT pg_notify('${NEW_JOB_CHANNEL}', queue) FROM woken`,
        [jobId],
      );
    },
    audit: async (record: AuditRecord) => {
      await writeAudit(client, record);
    },
  };
}

function signal(ctx: PgContext, request: SignalRequest, audit?: AuditRecord): Promise<SignalResult> {
  return inTransaction(ctx, "steps.signal", (client) => runSignalAsync(signalStore(client), request, audit));
}
