/**
 * The one form of every bulk job insert (the enqueue batches in enqueue.ts, plain and keyed; a flow's jobs in
 * flow-store.ts): `INSERT ... SELECT ... FROM unnest(...) WITH ORDINALITY`, the text and number columns as array
 * literals (array-literal.ts; a column null on every row is sent as no array, which `unnest` pads with nulls), the
 * args and the trace contexts as one JSON array each, read by position. Parameters $1-$12 are the columns every job has
 * (`jobParams`); a statement appends the ones only it writes (the args hash and keys; the flow and step) as $13 on.
 */
import type { NewJob } from "@soniq/core/backend";
import { dateColumn, intColumn, numberArray, textArray, textColumn } from "./array-literal.js";

/** The columns `JOB_SELECT` fills, in its order. */
export const JOB_INSERT_COLUMNS =
  'id, job_name, args, queue, priority, max_attempts, scheduled_at, producer_id, "group", trace_id, trace_context, args_version';

/** One row of `jobUnnest` (alias `u`) as `JOB_INSERT_COLUMNS`: args ($2) and trace context ($3) by position. */
export const JOB_SELECT = `u.id, u.job_name, $2::jsonb -> (u.n::int - 1), u.queue, u.priority, u.max_attempts,
    COALESCE(u.scheduled_at, now()), u.producer_id, u."group", u.trace_id,
    NULLIF($3::jsonb -> (u.n::int - 1), 'null'::jsonb), u.args_version`;

/** The `unnest` of $1 and $4-$12, plus `extra` columns (`[parameter with its array type, column name]`), as `u`. */
export function jobUnnest(extra: readonly (readonly [string, string])[]): string {
  const params = extra.map(([param]) => `, ${param}`).join("");
  const names = extra.map(([, name]) => `, ${name}`).join("");
  return `unnest($1::uuid[], $4::text[], $5::text[], $6::int[], $7::int[], $8::timestamptz[], $9::text[],
    $10::text[], $11::text[], $12::int[]${params})
    WITH ORDINALITY AS u(id, job_name, queue, priority, max_attempts, scheduled_at, producer_id, "group", trace_id,
      args_version${names}, n)`;
}

/** $1-$12. `canonicalIds`: every id is a lower-case hyphenated uuid (the caller checked), so none is quoted. */
export function jobParams(jobs: readonly NewJob[], canonicalIds: boolean): unknown[] {
  const hasContext = jobs.some((job) => job.traceContext !== null && job.traceContext !== undefined);
  return [
    canonicalIds ? `{${jobs.map((job) => job.id).join(",")}}` : textArray(jobs.map((job) => job.id)),
    JSON.stringify(jobs.map((job) => job.args)),
    hasContext ? JSON.stringify(jobs.map((job) => job.traceContext ?? null)) : null,
    textArray(jobs.map((job) => job.jobName)),
    textArray(jobs.map((job) => job.queue)),
    numberArray(jobs.map((job) => job.priority)),
    numberArray(jobs.map((job) => job.maxAttempts)),
    dateColumn(jobs.map((job) => job.scheduledAt)),
    textColumn(jobs.map((job) => job.producerId)),
    textColumn(jobs.map((job) => job.group)),
    textColumn(jobs.map((job) => job.traceId)),
    intColumn(jobs.map((job) => job.argsVersion)),
  ];
}
