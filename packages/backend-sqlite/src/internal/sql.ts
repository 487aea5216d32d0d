import { type ListPosition, SoniqError } from "@soniq/core/backend";

/**
 * SQL fragments shared by every operation. Timestamps are integer epoch milliseconds; "now" is always
 * computed by SQLite inside the statement (one value per statement), so every comparison uses the
 * database's clock, as the backend contract asks.
 */

/** Current time in epoch ms by SQLite's clock. `unixepoch('subsec')` needs SQLite 3.42+ (better-sqlite3 12 ships 3.5x). */
export const NOW = "CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)";

export const JOB_COLUMNS = [
  "id",
  "job_name",
  "args",
  "args_hash",
  "status",
  "attempts",
  "max_attempts",
  "queue",
  "priority",
  "unique_job",
  "dedup_key",
  "scheduled_at",
  "expires_at",
  "last_error",
  "result",
  "producer_id",
  "worker_id",
  '"group"',
  "flow_id",
  "step_ref",
  "args_version",
  "created_at",
  "updated_at",
  "progress",
  "trace_id",
  "trace_context",
].join(", ");

export const DEAD_LETTER_COLUMNS = [
  "id",
  "job_name",
  "args",
  "queue",
  "priority",
  "max_attempts",
  "attempts",
  "last_error",
  "dead_letter_reason",
  "tags",
  "resurrection_count",
  "last_resurrection_at",
  "original_created_at",
  "moved_to_dead_letter_at",
  "created_at",
  "flow_id",
  "step_ref",
  "args_version",
  "trace_id",
  "trace_context",
].join(", ");

export const WORKER_COLUMNS =
  "id, hostname, pid, queues, concurrency, status, last_heartbeat, started_at, version, metadata";

/**
 * WHERE, ORDER BY and LIMIT of one list page over `at` (an epoch-ms column) and id, or over id alone when
 * `at` is null (jobs: the primary key): newest first from the top or after a position, nearest first before
 * one (`newer`; core reverses that page). Adds `@limit`, `@offset` and the position's `@id` (and `@at`) to
 * `params`.
 */
export function pageSql(
  at: string | null,
  page: { limit: number; offset: number; position: ListPosition | null },
  where: string[],
  params: Record<string, unknown>,
): string {
  const p = page.position;
  if (p !== null) {
    const op = p.direction === "older" ? "<" : ">";
    if (at === null) {
      where.push(`id ${op} @id`);
    } else {
      where.push(`(${at}, id) ${op} (@at, @id)`);
      params.at = p.at.getTime();
    }
    params.id = p.id;
  }
  params.limit = page.limit;
  params.offset = page.offset;
  const dir = p?.direction === "newer" ? "ASC" : "DESC";
  return `${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY ${at === null ? "" : `${at} ${dir}, `}id ${dir} LIMIT @limit OFFSET @offset`;
}

/**
 * The text search (`q`) and id set (`ids`) of a list filter as conditions, their values added to `params`
 * (`@q`, `@ids`). `instr` takes every character literally (no LIKE wildcards); `lower` folds ASCII, as
 * the contract allows. An empty id set is `json_each('[]')`: no row.
 */
export function searchAndIds(
  query: { q: string | null; ids: readonly string[] | null },
  params: Record<string, unknown>,
): string[] {
  const where: string[] = [];
  if (query.ids !== null) {
    where.push("id IN (SELECT value FROM json_each(@ids))");
    params.ids = jsonList(query.ids);
  }
  if (query.q !== null) {
    where.push(
      "(instr(lower(id), lower(@q)) > 0 OR instr(lower(job_name), lower(@q)) > 0" +
        " OR instr(lower(last_error), lower(@q)) > 0)",
    );
    params.q = query.q;
  }
  return where;
}

/** Binds a list of strings as one parameter: `col IN (SELECT value FROM json_each(?))`. */
export function jsonList(values: readonly string[]): string {
  return JSON.stringify(values);
}

/**
 * JSON text for a nullable JSON column (`undefined` and `null` both store SQL NULL). A value JSON cannot
 * encode (a BigInt, a cycle) is `SONIQ_INVALID_ARGUMENT` naming the field, before anything is written.
 */
export function jsonOrNull(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", `The ${field} value is not JSON-serialisable.`, {
      context: { field },
      cause,
    });
  }
  return text ?? null;
}

/** Epoch ms for a Date, or null. */
export function msOrNull(date: Date | null | undefined): number | null {
  return date ? date.getTime() : null;
}

/**
 * SET clauses for a job going back to `queued`: if another queued job now holds its dedup_key (or its
 * unique name+args), the returning job gives them up, since the partial unique indexes allow one queued
 * holder. Evaluated per row before the update; run it one row per statement so each sees the last.
 */
export const RELEASE_TAKEN_KEYS = `dedup_key = CASE WHEN dedup_key IS NOT NULL AND EXISTS (
      SELECT 1 FROM soniq_jobs AS other WHERE other.status = 'queued' AND other.dedup_key = soniq_jobs.dedup_key
        AND other.id <> soniq_jobs.id) THEN NULL ELSE dedup_key END,
    unique_job = CASE WHEN unique_job = 1 AND EXISTS (
      SELECT 1 FROM soniq_jobs AS other WHERE other.status = 'queued' AND other.unique_job = 1
        AND other.job_name = soniq_jobs.job_name AND other.args_hash = soniq_jobs.args_hash
        AND other.id <> soniq_jobs.id) THEN 0 ELSE unique_job END`;
