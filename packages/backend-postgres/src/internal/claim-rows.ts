/**
 * The claim's own result shape, the hot path of every drain: the claimed rows come back as arrays
 * (`rowMode: 'array'`, no per-row object keyed by column name) without the two columns the claim itself
 * set to known values (`status` is 'processing', `worker_id` is the claimer), and with a timestamptz
 * parser that parses each distinct text once per column and statement: a claim's rows share `updated_at` (one
 * `now()`), and rows enqueued together share `created_at` and usually `scheduled_at`, so most of the
 * date parsing (a regex and a `Date` per value in pg's default parser) becomes a string compare.
 * Every other column is parsed by pg's registered parsers, as the pool does.
 */
import type { Job, TraceContext } from "@soniq/core/backend";
import pg from "pg";
import { toDate } from "./rows.js";

/** What the claim RETURNs, in this order (`mapClaimedRow` reads by position). */
export const CLAIM_COLUMNS =
  "id, job_name, args, args_hash, attempts, max_attempts, queue, priority, unique_job, dedup_key, " +
  'scheduled_at, expires_at, last_error, result, producer_id, created_at, updated_at, "group", flow_id, step_ref, progress, ' +
  "trace_id, trace_context, args_version";

const TIMESTAMPTZ_OID = 1184;

/**
 * Parses timestamptz with pg's registered parser, remembering the last text: equal texts in a row give
 * equal instants (a fresh `Date` each, since `Date` is mutable and every job owns its fields).
 */
function memoTimestamptz(): (text: string) => Date {
  const parse = pg.types.getTypeParser(TIMESTAMPTZ_OID, "text");
  let lastText: string | undefined;
  let lastMs = 0;
  return (text) => {
    if (text !== lastText) {
      lastMs = toDate(parse(text)).getTime();
      lastText = text;
    }
    return new Date(lastMs);
  };
}

/**
 * Per-statement type parsers. pg asks for one parser per result column, so each timestamptz column gets
 * its own memo (the columns differ from each other: one memo for all would miss on every value).
 */
export const CLAIM_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === TIMESTAMPTZ_OID && format !== "binary"
      ? memoTimestamptz()
      : pg.types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig["getTypeParser"],
};

function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** One claimed row (positions as in `CLAIM_COLUMNS`) as core's `Job`. */
export function mapClaimedRow(row: unknown[], workerId: string | null): Job {
  return {
    id: String(row[0]),
    jobName: String(row[1]),
    args: row[2],
    argsHash: strOrNull(row[3]),
    status: "processing",
    attempts: Number(row[4]),
    maxAttempts: Number(row[5]),
    queue: String(row[6]),
    priority: Number(row[7]),
    uniqueJob: row[8] === true,
    dedupKey: strOrNull(row[9]),
    scheduledAt: toDate(row[10]),
    expiresAt: row[11] === null ? null : toDate(row[11]),
    lastError: strOrNull(row[12]),
    result: row[13] ?? null,
    producerId: strOrNull(row[14]),
    workerId,
    createdAt: toDate(row[15]),
    updatedAt: toDate(row[16]),
    group: strOrNull(row[17]),
    flowId: strOrNull(row[18]),
    stepRef: strOrNull(row[19]),
    argsVersion: numOrNull(row[23]),
    progress: row[20] ?? null,
    traceId: strOrNull(row[21]),
    traceContext: (row[22] ?? null) as TraceContext | null,
  };
}
