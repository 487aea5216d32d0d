/** The deadLetters facet: reading, replaying and purging dead-letter rows (the operator's side of the table). */
import type {
  AuditRecord,
  DeadLetterJob,
  DeadLetterListQuery,
  DeadLetterMatch,
  DeadLettersFacet,
  ReplayRequest,
} from "@soniq/core/backend";
import { auditCte, auditValues } from "./internal/audit-rows.js";
import { type PgContext, query, readQuery } from "./internal/context.js";
import { type Condition, listQuery, msOf, msParam, whereClauses, whereSql } from "./internal/list-query.js";
import { NEW_JOB_CHANNEL } from "./internal/listen-client.js";
import { DEAD_LETTER_COLUMNS, mapDeadLetterJob, type Row } from "./internal/rows.js";
import { deliveriesParam, outboxCte } from "./internal/webhook-rows.js";

export function deadLettersFacet(ctx: PgContext): DeadLettersFacet {
  return {
    list: (q) => list(ctx, q),
    count: (q) => count(ctx, q),
    get: (id) => get(ctx, id),
    replay: (id, request, audit) => replay(ctx, id, request, audit),
    purge: (id, audit) => purge(ctx, id, audit),
  };
}

const MOVED_AT = msOf("moved_to_dead_letter_at");

/** since/until compare the millisecond too (the same rows, for whole-millisecond bounds), so the index serves them. */
function conditions(q: DeadLetterMatch): Condition[] {
  return [
    ["job_name = ?", q.jobName],
    ["queue = ?", q.queue],
    ["dead_letter_reason = ?", q.reason],
    [`${MOVED_AT} >= ${msParam("?")}`, q.since],
    [`${MOVED_AT} < ${msParam("?")}`, q.until],
  ];
}

async function list(ctx: PgContext, q: DeadLetterListQuery): Promise<DeadLetterJob[]> {
  const select = `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs`;
  const res = await readQuery<Row>(ctx, "deadLetters.list", listQuery(select, conditions(q), MOVED_AT, q));
  return res.rows.map(mapDeadLetterJob);
}

async function count(ctx: PgContext, q: DeadLetterMatch): Promise<number> {
  const values: unknown[] = [];
  const where = whereSql(whereClauses(conditions(q), values));
  const res = await readQuery<{ n: number }>(ctx, "deadLetters.count", {
    text: `SELECT count(*)::int AS n FROM soniq_dead_letter_jobs ${where}`,
    values,
  });
  return res.rows[0]?.n ?? 0;
}

async function get(ctx: PgContext, id: string): Promise<DeadLetterJob | null> {
  const res = await query<Row>(ctx, "deadLetters.get", {
    name: "soniq_dlq_get",
    text: `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs WHERE id = $1`,
    values: [id],
  });
  const row = res.rows[0];
  return row ? mapDeadLetterJob(row) : null;
}

// One statement: the count bump and the new job commit together, and the NOTIFY goes out on commit.
const REPLAY = `WITH bumped AS (
  UPDATE soniq_dead_letter_jobs
  SET resurrection_count = resurrection_count + 1, last_resurrection_at = now()
  WHERE id = $1
  RETURNING job_name, args, queue, priority, max_attempts),
inserted AS (
  INSERT INTO soniq_jobs (id, job_name, args, queue, priority, max_attempts, scheduled_at)
  SELECT $2, job_name, args, COALESCE($3::text, queue), COALESCE($4::int, priority), max_attempts,
         COALESCE($5::timestamptz, now())
  FROM bumped
  RETURNING id, queue)
SELECT id, pg_notify('${NEW_JOB_CHANNEL}', queue) FROM inserted`;
const REPLAY_AUDITED = REPLAY.replace(
  "\nSELECT id, pg_notify",
  `,\n${auditCte("inserted", 6)}\nSELECT id, pg_notify`,
);

async function replay(
  ctx: PgContext,
  id: string,
  request: ReplayRequest,
  audit: AuditRecord | undefined,
): Promise<string | null> {
  const values = [id, request.newId, request.queue, request.priority, request.scheduledAt];
  if (request.deliveries !== undefined && request.deliveries.length > 0) {
    // The `job.resurrected` deliveries commit with the replay (one statement, when it inserted the job).
    const base = audit ? REPLAY_AUDITED : REPLAY;
    const param = audit ? 13 : 6;
    const text = base.replace(
      "\nSELECT id, pg_notify",
      `,\n${outboxCte(`$${param}`, "EXISTS (SELECT 1 FROM inserted)")}\nSELECT id, pg_notify`,
    );
    const all = [...values, ...(audit ? auditValues(audit) : []), deliveriesParam(request.deliveries)];
    const res = await query<{ id: string }>(ctx, "deadLetters.replay", { text, values: all });
    return res.rows[0]?.id ?? null;
  }
  const res = await query<{ id: string }>(
    ctx,
    "deadLetters.replay",
    audit
      ? { text: REPLAY_AUDITED, values: [...values, ...auditValues(audit)] }
      : { name: "soniq_dlq_replay", text: REPLAY, values },
  );
  return res.rows[0]?.id ?? null;
}

const PURGE_AUDITED = `WITH purged AS (DELETE FROM soniq_dead_letter_jobs WHERE id = $1 RETURNING id),
  ${auditCte("purged", 2)}
SELECT id FROM purged`;

async function purge(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<boolean> {
  if (audit) {
    const res = await query(ctx, "deadLetters.purge", {
      text: PURGE_AUDITED,
      values: [id, ...auditValues(audit)],
    });
    return res.rows.length === 1;
  }
  const res = await query(ctx, "deadLetters.purge", {
    name: "soniq_dlq_purge",
    text: "DELETE FROM soniq_dead_letter_jobs WHERE id = $1",
    values: [id],
  });
  return res.rowCount === 1;
}
