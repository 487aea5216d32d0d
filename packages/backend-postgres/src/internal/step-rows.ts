/**
 * The durable-step rows (`soniq_job_steps`, `soniq_job_signals`; DESIGN.md section 19) as every facet that
 * touches them writes them: the checkpoint's columns and mapper, the fenced checkpoint upsert, and the fragments
 * a dead letter's replay and purge compose (internal/effects.ts), and the retention sweep's orphan delete.
 *
 * `job_id` has no foreign key: a job's rows stay with its dead letter (same id), move to a replay's new job, and
 * go with a purge or, once neither a job nor a dead letter has the id (an expired or at once deleted done job), with
 * the next retention sweep.
 */
import type { JobStep, ReplaySteps } from "@soniq/core/backend";
import { textArray } from "./array-literal.js";
import type { Fragment } from "./effects.js";
import { type Row, toDate } from "./rows.js";
import { PROCESSING } from "./settle-sql.js";

export const STEP_COLUMNS = "name, kind, state, value, error, attempt, started_at, finished_at, wake_at";

/**
 * The checkpoints of several jobs (`$1`, a uuid array), each job's in the order `steps.list` gives, for the
 * grouped reads of `steps.list`. Each id is looked up through the primary key, in a lateral subquery that
 * `OFFSET 0` keeps from being flattened: written as `job_id = ANY($1)`, or as a plain lateral join, the generic
 * plan of a table without statistics (no ANALYZE since a drain began) read it whole and hashed it, 1.25 ms a
 * call at 20,000 rows against 18 µs for the lookups (bench W9).
 */
export const LIST_STEPS_MANY = `SELECT s.* FROM unnest($1::uuid[]) AS j(id)
  CROSS JOIN LATERAL (SELECT job_id, seq, ${STEP_COLUMNS} FROM soniq_job_steps WHERE job_id = j.id OFFSET 0) s
  ORDER BY s.job_id, s.seq, s.name`;

const dateOrNull = (v: unknown) => (v === null || v === undefined ? null : toDate(v));

export function mapStep(row: Row): JobStep {
  return {
    name: String(row.name),
    kind: row.kind as JobStep["kind"],
    state: row.state as JobStep["state"],
    value: row.value ?? null,
    error: row.error === null || row.error === undefined ? null : String(row.error),
    attempt: Number(row.attempt),
    startedAt: dateOrNull(row.started_at),
    finishedAt: dateOrNull(row.finished_at),
    wakeAt: dateOrNull(row.wake_at),
  };
}

/** A JSON value as a jsonb parameter: null (and undefined) as SQL NULL, which reads back as null too. */
export function jsonParam(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * The run's fence on the job's row ($1 id, $2 the claim's attempt, $3 the worker or null), as a settle's: the
 * status test is a filter on the row the key finds (settle-sql.ts `PROCESSING`), never a bitmap of the
 * processing index.
 */
export const RUN_FENCE = `id = $1::uuid AND ${PROCESSING} AND attempts = $2::int AND ($3::uuid IS NULL OR worker_id = $3::uuid)`;

/** A new checkpoint's `seq`: after the job's others (first-write order; replacing one keeps its place). */
const NEXT_SEQ = "COALESCE((SELECT max(o.seq) FROM soniq_job_steps o WHERE o.job_id = $1::uuid), 0) + 1";

const UPSERT_COLUMNS =
  "job_id, name, seq, kind, state, value, error, attempt, started_at, finished_at, wake_at";
const ON_NAME = "ON CONFLICT (job_id, name) DO UPDATE SET kind = EXCLUDED.kind, state = EXCLUDED.state,";
const REPLACED =
  "value = EXCLUDED.value, error = EXCLUDED.error, attempt = EXCLUDED.attempt, " +
  "started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at, wake_at = EXCLUDED.wake_at";

/**
 * A `step` checkpoint, fenced, in ONE statement: the job's row is read `FOR SHARE` (a cancel, a stale recovery or
 * another claim waits for the checkpoint to commit, and one that committed first leaves no row), and the upsert
 * reads from it, so a broken fence writes nothing and returns no row. $4 name, $5 state, $6 value, $7 error,
 * $8 started_at; finished_at is the database's now.
 */
export const SAVE_STEP = `WITH fence AS (SELECT id FROM soniq_jobs WHERE ${RUN_FENCE} FOR SHARE)
INSERT INTO soniq_job_steps (${UPSERT_COLUMNS})
SELECT id, $4::text, ${NEXT_SEQ}, 'step', $5::text, $6::jsonb, $7::text, $2::int, $8::timestamptz, now(), NULL
FROM fence
${ON_NAME} ${REPLACED}
RETURNING 1`;

/**
 * Many `step` checkpoints in ONE statement (internal/step-batch.ts groups the saves of concurrent runs): the
 * jobs' rows read `FOR SHARE` by primary key (`id = ANY`, never a scan), each item fenced by its own attempt
 * and worker, and upserted; a job's new checkpoints in one call take its next places in item order. The items
 * are parallel arrays ($1 job ids, $2 attempts, $3 workers (NULL: any), $4 names, $5 states, $6 values as JSON
 * text, $7 errors, $8 started_at); no (job, name) appears twice in one call (the upsert could not affect a row
 * twice). Returns the (job_id, name) of every item that applied.
 */
export const SAVE_STEPS = `WITH fence AS (
  SELECT id, attempts, worker_id FROM soniq_jobs WHERE id = ANY($1::uuid[]) AND ${PROCESSING} FOR SHARE),
item AS (
  SELECT * FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::timestamptz[]) WITH ORDINALITY AS i(job_id, attempt, worker_id, name, state, value, error, started_at, n))
INSERT INTO soniq_job_steps (${UPSERT_COLUMNS})
SELECT i.job_id, i.name,
  COALESCE((SELECT max(o.seq) FROM soniq_job_steps o WHERE o.job_id = i.job_id), 0)
    + row_number() OVER (PARTITION BY i.job_id ORDER BY i.n),
  'step', i.state, i.value::jsonb, i.error, i.attempt, i.started_at, now(), NULL
FROM item i JOIN fence f ON f.id = i.job_id AND f.attempts = i.attempt
  AND (i.worker_id IS NULL OR f.worker_id = i.worker_id)
${ON_NAME} ${REPLACED}
RETURNING job_id, name`;

/** A checkpoint as a wait writes it (the job's row already held): $1 job, then the `JobStep`'s fields. */
export const WRITE_STEP = `INSERT INTO soniq_job_steps (${UPSERT_COLUMNS})
SELECT $1::uuid, $2::text, ${NEXT_SEQ}, $3::text, $4::text, $5::jsonb, $6::text, $7::int, $8::timestamptz,
  $9::timestamptz, $10::timestamptz
${ON_NAME} ${REPLACED}`;

export function writeStepValues(jobId: string, step: JobStep): unknown[] {
  return [
    jobId,
    step.name,
    step.kind,
    step.state,
    jsonParam(step.value),
    step.error,
    step.attempt,
    step.startedAt,
    step.finishedAt,
    step.wakeAt,
  ];
}

/** What a replay carries when its request says nothing: the done checkpoints, nothing resolved. */
const KEEP_ALL: ReplaySteps = { keep: true, resolve: [] };

/**
 * A replay's checkpoints and signals, written only when `source` (the new job's insert) returned a row, in the
 * replay's statement: with `keep`, the dead letter's `done` checkpoints move to the new job (but those `resolve`
 * names); `resolve`'s are recorded `done` on it (attempt 0, the operator's value), each in the place its name
 * had in the dead letter's timeline, a new name after the others; unconsumed signals always move. One text
 * whatever the request holds (its choices are parameters), so the statement can stay a named one.
 */
export function replayedSteps(
  id: string,
  newId: string,
  request: ReplaySteps | undefined,
  source: string,
): Fragment {
  return (bind) => {
    const steps = request ?? KEEP_ALL;
    const resolved = new Map(steps.resolve.map((r) => [r.name, r.value]));
    const old = bind.param(id);
    const fresh = bind.param(newId);
    const keep = bind.param(steps.keep);
    const names = bind.param(textArray([...resolved.keys()]));
    const values = bind.param(JSON.stringify([...resolved.values()].map((v) => v ?? null)));
    const applied = `EXISTS (SELECT 1 FROM ${source})`;
    return `kept_steps AS (UPDATE soniq_job_steps SET job_id = ${fresh}::uuid
  WHERE job_id = ${old}::uuid AND state = 'done' AND ${keep}::bool AND name <> ALL(${names}::text[]) AND ${applied}
  RETURNING 1),
resolved_steps AS (INSERT INTO soniq_job_steps (${UPSERT_COLUMNS})
  SELECT ${fresh}::uuid, r.name,
    COALESCE(o.seq, COALESCE((SELECT max(m.seq) FROM soniq_job_steps m WHERE m.job_id = ${old}::uuid), 0) + r.n::int),
    'step', 'done', ${values}::jsonb -> (r.n::int - 1), NULL, 0, now(), now(), NULL
  FROM unnest(${names}::text[]) WITH ORDINALITY AS r(name, n)
  LEFT JOIN soniq_job_steps o ON o.job_id = ${old}::uuid AND o.name = r.name
  WHERE ${applied}
  RETURNING 1),
moved_signals AS (UPDATE soniq_job_signals SET job_id = ${fresh}::uuid
  WHERE job_id = ${old}::uuid AND consumed_at IS NULL AND ${applied}
  RETURNING 1)`;
  };
}

/** A purge's: the id's checkpoints and signals deleted when `source` (the dead letter's delete) returned a row. */
export function purgedSteps(id: string, source: string): Fragment {
  return (bind) => {
    const old = bind.param(id);
    const applied = `EXISTS (SELECT 1 FROM ${source})`;
    return `purged_steps AS (DELETE FROM soniq_job_steps WHERE job_id = ${old}::uuid AND ${applied} RETURNING 1),
purged_signals AS (DELETE FROM soniq_job_signals WHERE job_id = ${old}::uuid AND ${applied} RETURNING 1)`;
  };
}

/**
 * Up to `$limit` distinct `job_id`s of `table` after `$after`, in order (`n` 1, 2, ...), by a skip scan (one probe
 * of its job-led index per job id). Row `$limit` is the last one looked at when the limit stopped the scan; it is
 * missing or NULL when the table's end did.
 */
function jobIdsAfter(name: string, table: string, after: string, limit: string): string {
  return `${name} AS (
    (SELECT job_id, 1 AS n FROM ${table} WHERE job_id > ${after}::uuid ORDER BY job_id LIMIT 1)
    UNION ALL
    SELECT (SELECT t.job_id FROM ${table} t WHERE t.job_id > ${name}.job_id ORDER BY t.job_id LIMIT 1), ${name}.n + 1
    FROM ${name} WHERE ${name}.job_id IS NOT NULL AND ${name}.n < ${limit}::int)`;
}

/** Where an orphan sweep starts: before every id. */
export const FIRST_JOB_ID = "00000000-0000-0000-0000-000000000000";

/** How many job ids of each table one sweep looks at (its cost is bounded, whatever the tables hold). */
export const ORPHAN_SWEEP_IDS = 1_000;

/**
 * The retention sweep's second statement: checkpoints and signals whose id neither a job nor a dead letter has
 * (a done job's row expired, or deleted at once with a result TTL of 0). It looks at the next `ORPHAN_SWEEP_IDS`
 * job ids of each table after its cursor ($1 steps, $2 signals; $3 the count), found by a skip scan of the
 * table's job-led index and each probed by primary key in both tables, so a sweep costs the same however many
 * jobs keep steps; it answers where the next one starts (NULL: the table's end was reached, start over). A table
 * of up to that many jobs with steps is swept whole by every call. Rows moved by a concurrent replay are
 * re-checked by the delete and kept.
 */
export const DELETE_ORPHAN_STEPS = `WITH RECURSIVE ${jobIdsAfter("step_jobs", "soniq_job_steps", "$1", "$3")},
${jobIdsAfter("signal_jobs", "soniq_job_signals", "$2", "$3")},
orphans AS (
  SELECT a.job_id FROM (SELECT job_id FROM step_jobs UNION SELECT job_id FROM signal_jobs) a
  WHERE a.job_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM soniq_jobs j WHERE j.id = a.job_id)
    AND NOT EXISTS (SELECT 1 FROM soniq_dead_letter_jobs d WHERE d.id = a.job_id)),
gone_steps AS (DELETE FROM soniq_job_steps WHERE job_id = ANY(ARRAY(SELECT job_id FROM orphans)) RETURNING 1),
gone_signals AS (DELETE FROM soniq_job_signals WHERE job_id = ANY(ARRAY(SELECT job_id FROM orphans)) RETURNING 1)
SELECT (SELECT job_id FROM step_jobs WHERE n = $3::int) AS steps_after,
  (SELECT job_id FROM signal_jobs WHERE n = $3::int) AS signals_after,
  (SELECT count(*) FROM gone_steps)::int AS steps, (SELECT count(*) FROM gone_signals)::int AS signals`;
