/**
 * The deadLetters facet: reading, replaying and purging dead-letter rows (the operator's side of the table).
 *
 * A replay or purge is one statement composed from CTE fragments (internal/effects.ts): the main write, then
 * the effects riding on it (the audit row, the `job.resurrected` deliveries), written only when the main write
 * changed a row. A flow step's dead letter is left alone by that statement, which says so (`step`): it is
 * replayed or purged in a transaction that runs core's flow program first (the step rejoins its flow, or its
 * dependents are cancelled), then the same fragments. A miss costs the one statement. A replay whose request
 * says the row is a step's (`request.step`: core read the row) takes the step's transaction at once, and one
 * that says it is not never looks for a step, so a replay takes one path, never the plain one and then the other.
 *
 * The row's durable steps ride along as fragments too (internal/step-rows.ts), on both paths: a replay moves its
 * kept checkpoints and its unconsumed signals to the new job and records the resolved ones, a purge deletes them,
 * each only when the main write applied.
 */
import {
  type AuditRecord,
  type DeadLetterJob,
  type DeadLetterListQuery,
  type DeadLetterMatch,
  type DeadLettersFacet,
  type ReplayRequest,
  replayStep as rejoinStep,
  purgeStep as removeStep,
} from "@soniq/core/backend";
import { type PgContext, query, readQuery } from "./internal/context.js";
import { compose, effectCtes, type Fragment, noEffects, type WriteEffects } from "./internal/effects.js";
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
import { purgedSteps, replayedSteps } from "./internal/step-rows.js";
import { inTransaction } from "./internal/tx.js";

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

const BUMPED = `UPDATE soniq_dead_letter_jobs
  SET resurrection_count = resurrection_count + 1, last_resurrection_at = now()`;

/**
 * The main write of a replay: `bumped` (the dead letter's count) and `inserted` (the new job, with the dead
 * letter's name, args and args version: the worker upcasts older args at run). `step` null
 * replays a dead letter outside flows only; otherwise the row may be a step's, and the new job takes the
 * step's place in its flow when `step.rejoin` (core's flow program said so, in this transaction).
 */
function replayed(id: string, request: ReplayRequest, step: { rejoin: boolean } | null): Fragment {
  return (bind) => {
    const row = bind.param(id);
    const flowColumns = step === null ? "" : ", flow_id, step_ref";
    const rejoin = step === null ? "" : bind.param(step.rejoin);
    const stepValues =
      step === null ? "" : `, CASE WHEN ${rejoin} THEN flow_id END, CASE WHEN ${rejoin} THEN step_ref END`;
    return `bumped AS (${BUMPED}
  WHERE id = ${row}${step === null ? " AND flow_id IS NULL" : ""}
  RETURNING job_name, args, args_version, queue, priority, max_attempts${flowColumns}),
inserted AS (
  INSERT INTO soniq_jobs (id, job_name, args, args_version, queue, priority, max_attempts, scheduled_at${flowColumns},
    trace_id, trace_context)
  SELECT ${bind.param(request.newId)}, job_name, args, args_version, COALESCE(${bind.param(request.queue)}::text, queue),
    COALESCE(${bind.param(request.priority)}::int, priority), max_attempts,
    COALESCE(${bind.param(request.scheduledAt)}::timestamptz, now())${stepValues},
    ${bind.param(request.traceId)}, ${bind.param(traceJson(request))}::jsonb
  FROM bumped
  RETURNING id, queue),
notified AS (SELECT id, pg_notify('${NEW_JOB_CHANNEL}', queue) FROM inserted)`;
  };
}

const traceJson = (request: ReplayRequest) =>
  request.traceContext === null ? null : JSON.stringify(request.traceContext);

/** The final SELECT: the new job's id (its NOTIFY goes out on commit) and whether `id` is a step's dead letter. */
const replayAnswer =
  (id: string): Fragment =>
  (bind) =>
    `SELECT (SELECT id FROM notified) AS id,
  EXISTS (SELECT 1 FROM soniq_dead_letter_jobs WHERE id = ${bind.param(id)} AND flow_id IS NOT NULL) AS step`;

async function replay(
  ctx: PgContext,
  id: string,
  request: ReplayRequest,
  audit: AuditRecord | undefined,
): Promise<string | null> {
  const effects: WriteEffects = { audit, deliveries: request.deliveries };
  // A step's dead letter (core read the row) goes straight to the step's path: no plain attempt first.
  if (request.step === true) return replayStep(ctx, id, request, effects);
  const statement = compose(
    [
      replayed(id, request, null),
      replayedSteps(id, request.newId, request.steps, "inserted"),
      ...effectCtes(effects, "inserted"),
    ],
    replayAnswer(id),
  );
  const res = await query<{ id: string | null; step: boolean }>(
    ctx,
    "deadLetters.replay",
    noEffects(effects) ? { name: "soniq_dlq_replay", ...statement } : statement,
  );
  const answer = res.rows[0];
  if (answer?.id) return answer.id;
  return answer?.step && request.step === undefined ? replayStep(ctx, id, request, effects) : null;
}

const STEP_OF =
  "SELECT flow_id, step_ref FROM soniq_dead_letter_jobs WHERE id = $1 AND flow_id IS NOT NULL FOR UPDATE";

/** A step's replay: the new job takes the step's place (core's flow program decides), in one transaction. */
async function replayStep(
  ctx: PgContext,
  id: string,
  request: ReplayRequest,
  effects: WriteEffects,
): Promise<string | null> {
  return inTransaction(ctx, "deadLetters.replay", async (client) => {
    const step = (await client.query<Row>(STEP_OF, [id])).rows[0];
    if (step === undefined) return null;
    const program = rejoinStep(String(step.flow_id), String(step.step_ref), id, request.newId, new Date());
    const rejoin = await runFlow(clientRunner(client), program);
    const { text, values } = compose(
      [
        replayed(id, request, { rejoin }),
        replayedSteps(id, request.newId, request.steps, "inserted"),
        ...effectCtes(effects, "inserted"),
      ],
      () => "SELECT id FROM notified",
    );
    return (await client.query<{ id: string }>(text, values)).rows[0]?.id ?? null;
  });
}

/** The main write of a purge: `purged`, the deleted row (a step's with `step`, else one outside flows). */
const purged =
  (id: string, step: boolean): Fragment =>
  (bind) =>
    `purged AS (DELETE FROM soniq_dead_letter_jobs WHERE id = ${bind.param(id)}
  AND flow_id IS ${step ? "NOT NULL" : "NULL"} RETURNING flow_id, step_ref)`;

async function purge(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<boolean> {
  // A dead letter outside flows is purged by one statement; a step's (the statement says so) cancels the
  // dependents it held, in one transaction.
  const effects: WriteEffects = { audit };
  const statement = compose(
    [purged(id, false), purgedSteps(id, "purged"), ...effectCtes(effects, "purged")],
    (bind) => `SELECT EXISTS (SELECT 1 FROM purged) AS purged,
  EXISTS (SELECT 1 FROM soniq_dead_letter_jobs WHERE id = ${bind.param(id)} AND flow_id IS NOT NULL) AS step`,
  );
  const res = await query<{ purged: boolean; step: boolean }>(
    ctx,
    "deadLetters.purge",
    noEffects(effects) ? { name: "soniq_dlq_purge", ...statement } : statement,
  );
  const answer = res.rows[0];
  if (answer?.purged) return true;
  return answer?.step === true && purgeStep(ctx, id, effects);
}

async function purgeStep(ctx: PgContext, id: string, effects: WriteEffects): Promise<boolean> {
  return inTransaction(ctx, "deadLetters.purge", async (client) => {
    const { text, values } = compose(
      [purged(id, true), purgedSteps(id, "purged"), ...effectCtes(effects, "purged")],
      () => "SELECT flow_id, step_ref FROM purged",
    );
    const row = (await client.query<Row>(text, values)).rows[0];
    if (row === undefined) return false;
    await runFlow(
      clientRunner(client),
      removeStep(String(row.flow_id), String(row.step_ref), id, new Date()),
    );
    return true;
  });
}
