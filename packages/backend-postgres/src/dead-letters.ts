/** The deadLetters facet: reading, replaying and purging dead-letter rows (the operator's side of the table). */
import {
  type AuditRecord,
  type DeadLetterJob,
  type DeadLetterListQuery,
  type DeadLetterMatch,
  type DeadLettersFacet,
  purgeStep,
  type ReplayRequest,
  replayStep as rejoinStep,
} from "@soniq/core/backend";
import { auditCte, auditValues, writeAudit } from "./internal/audit-rows.js";
import { type PgContext, query, readQuery } from "./internal/context.js";
import { clientRunner, runFlow } from "./internal/flow-store.js";
import {
  type Condition,
  listQuery,
  msOf,
  msParam,
  searchAndIds,
  whereClauses,
  whereSql,
} from "./internal/list-query.js";
import { NEW_JOB_CHANNEL } from "./internal/listen-client.js";
import { DEAD_LETTER_COLUMNS, mapDeadLetterJob, type Row } from "./internal/rows.js";
import { inTransaction } from "./internal/tx.js";
import { deliveriesParam, outboxCte, writeDeliveries } from "./internal/webhook-rows.js";

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
    ...searchAndIds(q),
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
  WHERE id = $1 AND flow_id IS NULL
  RETURNING job_name, args, queue, priority, max_attempts),
inserted AS (
  INSERT INTO soniq_jobs (id, job_name, args, queue, priority, max_attempts, scheduled_at, trace_id, trace_context)
  SELECT $2, job_name, args, COALESCE($3::text, queue), COALESCE($4::int, priority), max_attempts,
         COALESCE($5::timestamptz, now()), $6, $7::jsonb
  FROM bumped
  RETURNING id, queue)
SELECT id, pg_notify('${NEW_JOB_CHANNEL}', queue) FROM inserted`;
const REPLAY_AUDITED = REPLAY.replace(
  "\nSELECT id, pg_notify",
  `,\n${auditCte("inserted", 8)}\nSELECT id, pg_notify`,
);

const STEP_OF = "SELECT flow_id, step_ref FROM soniq_dead_letter_jobs WHERE id = $1 AND flow_id IS NOT NULL";

// A step's replay: the new job takes the step's place (flow-engine.ts decides), in the replay's transaction.
const REPLAY_STEP = `WITH bumped AS (
  UPDATE soniq_dead_letter_jobs
  SET resurrection_count = resurrection_count + 1, last_resurrection_at = now()
  WHERE id = $1
  RETURNING job_name, args, queue, priority, max_attempts, flow_id, step_ref),
inserted AS (
  INSERT INTO soniq_jobs (id, job_name, args, queue, priority, max_attempts, scheduled_at, flow_id, step_ref,
    trace_id, trace_context)
  SELECT $2, job_name, args, COALESCE($3::text, queue), COALESCE($4::int, priority), max_attempts,
         COALESCE($5::timestamptz, now()), CASE WHEN $6 THEN flow_id END, CASE WHEN $6 THEN step_ref END,
         $7, $8::jsonb
  FROM bumped
  RETURNING id, queue)
SELECT id, pg_notify('${NEW_JOB_CHANNEL}', queue) FROM inserted`;

async function replayStep(
  ctx: PgContext,
  id: string,
  request: ReplayRequest,
  audit: AuditRecord | undefined,
): Promise<string | null> {
  return inTransaction(ctx, "deadLetters.replay", async (client) => {
    const step = (await client.query<Row>(`${STEP_OF} FOR UPDATE`, [id])).rows[0];
    if (step === undefined) return null;
    const program = rejoinStep(String(step.flow_id), String(step.step_ref), id, request.newId, new Date());
    const rejoin = await runFlow(clientRunner(client), program);
    const values = [
      id,
      request.newId,
      request.queue,
      request.priority,
      request.scheduledAt,
      rejoin,
      request.traceId,
      request.traceContext === null ? null : JSON.stringify(request.traceContext),
    ];
    const inserted = (await client.query<{ id: string }>(REPLAY_STEP, values)).rows[0]?.id ?? null;
    if (inserted !== null && audit) await writeAudit(client, audit);
    if (inserted !== null) await writeDeliveries(client, request.deliveries);
    return inserted;
  });
}

async function replay(
  ctx: PgContext,
  id: string,
  request: ReplayRequest,
  audit: AuditRecord | undefined,
): Promise<string | null> {
  const values = [
    id,
    request.newId,
    request.queue,
    request.priority,
    request.scheduledAt,
    request.traceId,
    request.traceContext === null ? null : JSON.stringify(request.traceContext),
  ];
  if (request.deliveries !== undefined && request.deliveries.length > 0) {
    // The `job.resurrected` deliveries commit with the replay (one statement, when it inserted the job).
    const base = audit ? REPLAY_AUDITED : REPLAY;
    const param = values.length + 1 + (audit ? auditValues(audit).length : 0);
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
  // Nothing replayed: missing, or a flow step's dead letter, replayed inside its flow's transaction.
  return res.rows[0]?.id ?? replayStep(ctx, id, request, audit);
}

const PURGE_AUDITED = `WITH purged AS (DELETE FROM soniq_dead_letter_jobs WHERE id = $1 AND flow_id IS NULL RETURNING id),
  ${auditCte("purged", 2)}
SELECT id FROM purged`;

async function purgeOfStep(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<boolean> {
  return inTransaction(ctx, "deadLetters.purge", async (client) => {
    const res = await client.query<Row>(
      "DELETE FROM soniq_dead_letter_jobs WHERE id = $1 AND flow_id IS NOT NULL RETURNING flow_id, step_ref",
      [id],
    );
    const row = res.rows[0];
    if (row === undefined) return false;
    await runFlow(clientRunner(client), purgeStep(String(row.flow_id), String(row.step_ref), id, new Date()));
    if (audit) await writeAudit(client, audit);
    return true;
  });
}

async function purge(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<boolean> {
  // A dead letter outside flows is purged by one statement; a step's (the statement purged nothing) cancels
  // the dependents it held, in one transaction.
  return (await purgePlain(ctx, id, audit)) || purgeOfStep(ctx, id, audit);
}

async function purgePlain(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<boolean> {
  if (audit) {
    const res = await query(ctx, "deadLetters.purge", {
      text: PURGE_AUDITED,
      values: [id, ...auditValues(audit)],
    });
    return res.rows.length === 1;
  }
  const res = await query(ctx, "deadLetters.purge", {
    name: "soniq_dlq_purge",
    text: "DELETE FROM soniq_dead_letter_jobs WHERE id = $1 AND flow_id IS NULL",
    values: [id],
  });
  return res.rowCount === 1;
}
