/**
 * `soniq_job_steps` and `soniq_job_signals` rows: the checkpoint upsert the steps facet writes, and what the
 * facets that end or move a job do to them (a replay carries them, a purge and the retention sweep delete them).
 * `job_id` has no foreign key: the rows stay with a job's dead letter (same id) until a replay or a purge.
 */
import type { JobStep, ReplaySteps } from "@soniq/core/backend";
import type { SqliteContext } from "./context.js";
import { jsonOrNull, NOW } from "./sql.js";

export const STEP_COLUMNS = "name, kind, state, value, error, attempt, started_at, finished_at, wake_at";

export interface StepRecord {
  name: string;
  kind: JobStep["kind"];
  state: JobStep["state"];
  value: string | null;
  error: string | null;
  attempt: number;
  started_at: number | null;
  finished_at: number | null;
  wake_at: number | null;
}

export function toJobStep(r: StepRecord): JobStep {
  return {
    name: r.name,
    kind: r.kind,
    state: r.state,
    value: r.value === null ? null : JSON.parse(r.value),
    error: r.error,
    attempt: r.attempt,
    startedAt: r.started_at === null ? null : new Date(r.started_at),
    finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
    wakeAt: r.wake_at === null ? null : new Date(r.wake_at),
  };
}

/** A new checkpoint comes after the job's others (`seq`, the timeline's order); an update keeps its place. */
export const NEXT_SEQ = "(SELECT COALESCE(MAX(seq), 0) + 1 FROM soniq_job_steps WHERE job_id = @id)";

/** The tail of every checkpoint insert: an existing (job, name) row takes the new values, `seq` kept. */
export const UPSERT_STEP = `ON CONFLICT (job_id, name) DO UPDATE SET kind = excluded.kind, state = excluded.state,
  value = excluded.value, error = excluded.error, attempt = excluded.attempt, started_at = excluded.started_at,
  finished_at = excluded.finished_at, wake_at = excluded.wake_at`;

const WRITE_STEP = `INSERT INTO soniq_job_steps (job_id, name, seq, kind, state, value, error, attempt, started_at,
    finished_at, wake_at)
  VALUES (@id, @name, ${NEXT_SEQ}, @kind, @state, @value, @error, @attempt, @startedAt, @finishedAt, @wakeAt)
  ${UPSERT_STEP}`;

/** Inserts or replaces one checkpoint of `jobId` as given. */
export function writeStep(ctx: SqliteContext, jobId: string, step: JobStep): void {
  ctx.statement(WRITE_STEP).run({
    id: jobId,
    name: step.name,
    kind: step.kind,
    state: step.state,
    value: jsonOrNull(step.value, "value"),
    error: step.error,
    attempt: step.attempt,
    startedAt: step.startedAt?.getTime() ?? null,
    finishedAt: step.finishedAt?.getTime() ?? null,
    wakeAt: step.wakeAt?.getTime() ?? null,
  });
}

const KEEP_DONE = "UPDATE soniq_job_steps SET job_id = @to WHERE job_id = @from AND state = 'done'";
const RESOLVE = `INSERT INTO soniq_job_steps (job_id, name, seq, kind, state, value, error, attempt, started_at,
    finished_at, wake_at)
  VALUES (@id, @name, ${NEXT_SEQ}, 'step', 'done', @value, NULL, 0, ${NOW}, ${NOW}, NULL)
  ${UPSERT_STEP}`;
const MOVE_SIGNALS = "UPDATE soniq_job_signals SET job_id = @to WHERE job_id = @from AND consumed_at IS NULL";

/** A replay's `resolve` values as JSON text, encoded before its transaction opens. */
export interface ResolvedStep {
  name: string;
  value: string | null;
}

export function encodeResolve(steps: ReplaySteps | undefined): ResolvedStep[] {
  return (steps?.resolve ?? []).map((r) => ({ name: r.name, value: jsonOrNull(r.value, "steps.resolve") }));
}

/**
 * Inside the replay's transaction, once the new job is inserted: the dead letter's `done` checkpoints move to it
 * (`keep`), the resolved ones are recorded `done` on it (attempt 0), and its unconsumed signals always move.
 */
export function carrySteps(
  ctx: SqliteContext,
  from: string,
  to: string,
  keep: boolean,
  resolve: readonly ResolvedStep[],
): void {
  if (keep) ctx.statement(KEEP_DONE).run({ from, to });
  for (const r of resolve) ctx.statement(RESOLVE).run({ id: to, name: r.name, value: r.value });
  ctx.statement(MOVE_SIGNALS).run({ from, to });
}

const DELETE_STEPS = "DELETE FROM soniq_job_steps WHERE job_id = ?";
const DELETE_SIGNALS = "DELETE FROM soniq_job_signals WHERE job_id = ?";

/** A purged dead letter's checkpoints and signals. */
export function deleteStepsOf(ctx: SqliteContext, jobId: string): void {
  ctx.statement(DELETE_STEPS).run(jobId);
  ctx.statement(DELETE_SIGNALS).run(jobId);
}

/**
 * Rows of `table` whose job is gone from both soniq_jobs and soniq_dead_letter_jobs (a done job's row expired or
 * was deleted at once, `resultTtlMs` 0). The job ids are found by skip-scanning the index that leads with
 * `job_id` (one seek per job that has rows), so a sweep reads no checkpoint of a live job.
 */
function orphansSql(table: string): string {
  return `WITH RECURSIVE j(id) AS (
      SELECT MIN(job_id) FROM ${table}
      UNION ALL
      SELECT (SELECT MIN(job_id) FROM ${table} WHERE job_id > j.id) FROM j WHERE j.id IS NOT NULL)
    DELETE FROM ${table} WHERE job_id IN (SELECT id FROM j WHERE id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM soniq_jobs WHERE soniq_jobs.id = j.id)
      AND NOT EXISTS (SELECT 1 FROM soniq_dead_letter_jobs WHERE soniq_dead_letter_jobs.id = j.id))`;
}

const DELETE_ORPHAN_STEPS = orphansSql("soniq_job_steps");
const DELETE_ORPHAN_SIGNALS = orphansSql("soniq_job_signals");

/** The retention sweep's part: checkpoints and signals of jobs that no longer exist. */
export function deleteOrphanSteps(ctx: SqliteContext): void {
  ctx.statement(DELETE_ORPHAN_STEPS).run();
  ctx.statement(DELETE_ORPHAN_SIGNALS).run();
}
