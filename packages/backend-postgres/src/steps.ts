/**
 * The steps facet (capability `steps`, DESIGN.md section 19): a job's checkpoints (`soniq_job_steps`) and its
 * signal mailbox (`soniq_job_signals`). Core decides names, limits and what a handler sees; this file stores,
 * fences and suspends (the SQL of the rows: internal/step-rows.ts).
 *
 * - `list`: concurrent reads grouped into one statement (the runs one claim started read their checkpoints at
 *   their first step at about the same time: one round trip instead of one each).
 * - `save`: concurrent runs' checkpoints grouped into one statement and one commit (internal/step-batch.ts);
 *   each item fenced on the job's row, read `FOR SHARE` by the statement, the checkpoint upserted from it.
 * - `saveInTransaction` / `completeInTransaction`: the application's writes on a pool client inside BEGIN
 *   (internal/tx.ts `applicationTransaction`), then the same fenced upsert, or the job's done settlement as
 *   `runs.settle` applies it (internal/settle-tx.ts), on that client; a broken fence rolls it all back. No lock
 *   is taken before the user's function ran.
 * - `wait` and `signal`: core's programs (`runWaitAsync`, `runSignalAsync`) over a store of this file's, in one
 *   transaction each; concurrent runs' waits share one transaction and one commit (the group commit again). Both
 *   lock the job's row `FOR UPDATE` first, so a signal and a wait of one job run one after the other: a signal
 *   sent while a wait decides is either consumed by it or finds the job suspended and makes it due now.
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
import { textArray } from "./internal/array-literal.js";
import { writeAudit } from "./internal/audit-rows.js";
import { type PgContext, query } from "./internal/context.js";
import { isQueuedKeyConflict } from "./internal/errors.js";
import { NEW_JOB_CHANNEL } from "./internal/listen-client.js";
import { CLEAR_COLLIDING_KEYS, CLEAR_KEYS, KEEP_KEYS } from "./internal/requeue-keys.js";
import { type Row, toDate } from "./internal/rows.js";
import { settleInTransaction } from "./internal/settle-tx.js";
import { type Groupable, GroupCommit, type StepSave, stepSave } from "./internal/step-batch.js";
import {
  jsonParam,
  LIST_STEPS_MANY,
  mapStep,
  RUN_FENCE,
  SAVE_STEP,
  SAVE_STEPS,
  STEP_COLUMNS,
  WRITE_STEP,
  writeStepValues,
} from "./internal/step-rows.js";
import { applicationTransaction, inTransaction, type PgTx } from "./internal/tx.js";

/** An `AsyncStore<S>` (core's program store type, each method answering a promise). */
type Async<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};

/** How many groups of waits one backend instance runs at once (each holds a pool connection while it runs). */
const WAIT_GROUPS_IN_FLIGHT = 4;
/** How many grouped reads of checkpoints run at once (a read is one round trip: two keep the latency low). */
const LIST_GROUPS_IN_FLIGHT = 2;

/** A `steps.list` as the grouping carries it (a read has no text to bound: size 0). */
type StepList = Groupable;

export function stepsFacet(ctx: PgContext): StepsFacet<PgTx> {
  const saves = new GroupCommit<StepSave, boolean>(
    (one) => save(ctx, one),
    async (many) => (await saveMany(ctx, many)).map((value) => ({ ok: true, value })),
  );
  // A wait is several round trips on its transaction's connection: groups in flight side by side.
  const waits = new GroupCommit<StepWait, WaitResult>(
    (one) => wait(ctx, one.ref, one.request, one.inProcessMs),
    (many) => waitMany(ctx, many),
    WAIT_GROUPS_IN_FLIGHT,
  );
  // The runs a claim starts read their checkpoints at their first step at about the same time: one statement.
  const lists = new GroupCommit<StepList, JobStep[]>(
    (one) => list(ctx, one.job),
    async (many) => {
      const byJob = await listMany(
        ctx,
        many.map((m) => m.job),
      );
      return many.map((m) => ({ ok: true, value: byJob.get(m.job) ?? [] }));
    },
    LIST_GROUPS_IN_FLIGHT,
  );
  return {
    list: (jobId) => lists.write({ job: jobId, key: jobId, size: 0 }),
    save: (ref, write) => saves.write(stepSave(ref, write)),
    saveInTransaction: (ref, fn, write) =>
      applicationTransaction(ctx, "steps.saveInTransaction", fn, (client, value) =>
        saveOn(client, ref, write(value)),
      ),
    completeInTransaction: (ref, fn, done) =>
      applicationTransaction(ctx, "steps.completeInTransaction", fn, async (client, value) => {
        const [applied] = await settleInTransaction(ctx, client, [done(value)], ref.workerId ?? undefined);
        return applied === true;
      }),
    wait: (ref, request, inProcessMs) =>
      waits.write({ ref, request, inProcessMs, job: ref.id, key: `${ref.id}\u0000${request.name}`, size: 0 }),
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

async function listMany(ctx: PgContext, jobIds: readonly string[]): Promise<Map<string, JobStep[]>> {
  const res = await query<Row>(ctx, "steps.list", {
    name: "soniq_steps_list_many",
    text: LIST_STEPS_MANY,
    values: [textArray(jobIds)],
  });
  const byJob = new Map<string, JobStep[]>();
  for (const row of res.rows) {
    const job = String(row.job_id);
    const steps = byJob.get(job);
    if (steps === undefined) byJob.set(job, [mapStep(row)]);
    else steps.push(mapStep(row));
  }
  return byJob;
}

function saveValues(ref: StepRef, write: StepWrite, json = jsonParam(write.value)): unknown[] {
  return [ref.id, ref.attempt, ref.workerId, write.name, write.state, json, write.error, write.startedAt];
}

async function save(ctx: PgContext, { ref, write, json }: StepSave): Promise<boolean> {
  const res = await query(ctx, "steps.save", {
    name: "soniq_step_save",
    text: SAVE_STEP,
    values: saveValues(ref, write, json),
  });
  return (res.rowCount ?? 0) > 0;
}

async function saveMany(ctx: PgContext, saves: readonly StepSave[]): Promise<boolean[]> {
  const column = (f: (s: StepSave) => string | null) => textArray(saves.map(f));
  const res = await query<{ job_id: string; name: string }>(ctx, "steps.save", {
    name: "soniq_steps_save",
    text: SAVE_STEPS,
    values: [
      column((s) => s.ref.id),
      column((s) => String(s.ref.attempt)),
      column((s) => s.ref.workerId),
      column((s) => s.write.name),
      column((s) => s.write.state),
      column((s) => s.json),
      column((s) => s.write.error),
      column((s) => s.write.startedAt.toISOString()),
    ],
  });
  const applied = new Set(res.rows.map((r) => `${String(r.job_id).toLowerCase()}\u0000${r.name}`));
  return saves.map((s) => applied.has(`${s.ref.id.toLowerCase()}\u0000${s.write.name}`));
}

/** The fenced upsert inside the application's transaction (unnamed: a named statement a pooler lost would abort it). */
async function saveOn(client: pg.ClientBase, ref: StepRef, write: StepWrite): Promise<boolean> {
  const res = await client.query(SAVE_STEP, saveValues(ref, write));
  return (res.rowCount ?? 0) > 0;
}

/**
 * The wait's store on the transaction's client. `suspend` puts the job back to `queued`, which can meet a queued
 * row that took its dedup key (or its unique name + args) while it ran: `keys` is the requeue form the attempt
 * runs with (internal/requeue-keys.ts), and a conflict runs the whole wait again with the next form. `hold` reads
 * the wait's own checkpoint (`name`) in its statement, after the lock, and `readStep` answers it from there: a
 * wait is one round trip shorter.
 */
function waitStore(client: pg.ClientBase, keys: string, name: string): Async<WaitStore> {
  let held: { jobId: string; step: JobStep | null } | undefined;
  return {
    hold: async (ref) => {
      const res = await client.query<Row>(
        // The time is read after the lock is held (clock_timestamp, outside the locking CTE): now() is the
        // transaction's start, which can precede a signal committed while this wait waited for the row. The
        // checkpoint is read by a LATERAL subquery, so after the lock too.
        `WITH held AS (SELECT 1 FROM soniq_jobs WHERE ${RUN_FENCE} FOR UPDATE)
         SELECT clock_timestamp() AS held_at, s.* FROM held
           LEFT JOIN LATERAL (SELECT ${STEP_COLUMNS} FROM soniq_job_steps WHERE job_id = $1 AND name = $4) s ON true`,
        [ref.id, ref.attempt, ref.workerId, name],
      );
      const row = res.rows[0];
      if (row === undefined) return null;
      held = { jobId: ref.id, step: row.name === null || row.name === undefined ? null : mapStep(row) };
      return toDate(row.held_at);
    },
    readStep: async (jobId, stepName) => {
      if (held !== undefined && held.jobId === jobId && stepName === name) return held.step;
      const res = await client.query<Row>(
        `SELECT ${STEP_COLUMNS} FROM soniq_job_steps WHERE job_id = $1 AND name = $2`,
        [jobId, stepName],
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
        runWaitAsync(
          waitStore(client, SUSPEND_FORMS[i] ?? CLEAR_KEYS, request.name),
          ref,
          request,
          inProcessMs,
        ),
      );
    } catch (err) {
      if (i >= SUSPEND_FORMS.length - 1 || !isQueuedKeyConflict(err)) throw err;
    }
  }
}

/** A `steps.wait` as the group commit carries it. */
interface StepWait extends Groupable {
  ref: StepRef;
  request: WaitRequest;
  inProcessMs: number;
}

/**
 * The waits of concurrent runs in ONE transaction (one commit): each run's wait program in turn on the same
 * client, as `wait` runs it alone, with the requeue form that keeps the keys. Any error (a key conflict included)
 * rolls the whole transaction back and throws: the group commit then runs each wait alone, where the conflict
 * takes the next form and any other error reaches only its own wait.
 */
async function waitMany(ctx: PgContext, items: readonly StepWait[]) {
  return inTransaction(ctx, "steps.wait", async (client) => {
    const outcomes: { ok: true; value: WaitResult }[] = [];
    for (const { ref, request, inProcessMs } of items) {
      const store = waitStore(client, KEEP_KEYS, request.name);
      outcomes.push({ ok: true, value: await runWaitAsync(store, ref, request, inProcessMs) });
    }
    return outcomes;
  });
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
