/**
 * The flows facet: start (inside the caller's `tx` when given), read, list and cancel workflows. Every
 * change is one of core's flow programs (flow-engine.ts) run on internal/flow-store.ts in one IMMEDIATE
 * transaction; the releases ride on the writes that cause them (runs.ts, jobs.ts, dead-letters.ts).
 */
import {
  cancelFlow,
  type Flow,
  type FlowListQuery,
  type FlowStepMatch,
  type FlowSummary,
  type FlowsFacet,
  type JobStatus,
  type NewWebhookDelivery,
  type ParentOutcome,
  parentOutcome,
  startFlow,
  toFlowStep,
  toFlowSummary,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import {
  FLOW_COLUMNS,
  type FlowRow,
  runFlow,
  STEP_READ_COLUMNS,
  type StepRow,
  toStoredFlow,
  toStoredStep,
} from "./internal/flow-store.js";
import { NOW } from "./internal/sql.js";
import { resolveTxDatabase, type SqliteTx } from "./internal/tx.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function flowsFacet(ctx: SqliteContext): FlowsFacet<SqliteTx> {
  return {
    start: (flow, options) =>
      runSync("flows.start", () => {
        const db = options.tx === undefined ? ctx.db : resolveTxDatabase(options.tx, ctx.db);
        immediate(ctx, () => runFlow(ctx, startFlow(flow, flow.createdBy, new Date()), db), db);
      }),
    get: (id) => runSync("flows.get", () => get(ctx, id)),
    list: (query) => runSync("flows.list", () => list(ctx, query)),
    cancel: (id, audit) =>
      runSync("flows.cancel", () => {
        const result = immediate(ctx, () => {
          const cancelled = runFlow(ctx, cancelFlow(id, new Date()));
          if (cancelled === null) return { cancelled: false, cancelledJobIds: [] };
          if (audit) writeAudit(ctx, audit);
          return { cancelled: true, cancelledJobIds: cancelled };
        });
        // The cancelled jobs finished (committed): waiters hear them, as after jobs.cancel.
        ctx.finished(result.cancelledJobIds);
        return result;
      }),
    stepOfJob: (jobId) => runSync("flows.stepOfJob", () => stepOfJob(ctx, jobId)),
    parents: (flowId, ref) => runSync("flows.parents", () => parents(ctx, flowId, ref)),
    notifyFinished: (limit, deliveries) =>
      runSync("flows.notifyFinished", () => immediate(ctx, () => notifyFinished(ctx, limit, deliveries))),
  };
}

const MARK_FINISHED = `UPDATE soniq_flows SET notified_at = ${NOW}
  WHERE id IN (SELECT id FROM soniq_flows WHERE finished_at IS NOT NULL AND notified_at IS NULL
    ORDER BY finished_at, id LIMIT ?)
  RETURNING ${FLOW_COLUMNS}`;

/** The `flow.finished` outbox: the flows marked and their deliveries written in one IMMEDIATE transaction. */
function notifyFinished(
  ctx: SqliteContext,
  limit: number,
  deliveries: (flows: readonly FlowSummary[]) => readonly NewWebhookDelivery[],
): number {
  const rows = ctx.statement(MARK_FINISHED).all(limit) as FlowRow[];
  if (rows.length === 0) return 0;
  const flows = rows
    .map((r) => toFlowSummary(toStoredFlow(r)))
    .sort((a, b) => Number(a.finishedAt) - Number(b.finishedAt) || (a.id < b.id ? -1 : 1));
  writeDeliveries(ctx, deliveries(flows));
  return flows.length;
}

type StepWithStatus = StepRow & { job_status: JobStatus | null };

const STEPS_OF_FLOW = `SELECT ${prefixed("s")}, j.status AS job_status FROM soniq_flow_steps s
  LEFT JOIN soniq_jobs j ON j.id = s.job_id WHERE s.flow_id = ? ORDER BY s.seq`;

function prefixed(alias: string): string {
  return STEP_READ_COLUMNS.split(", ")
    .map((c) => `${alias}.${c}`)
    .join(", ");
}

function get(ctx: SqliteContext, id: string): Flow | null {
  return ctx.db.transaction(() => {
    const row = ctx.statement(`SELECT ${FLOW_COLUMNS} FROM soniq_flows WHERE id = ?`).get(id);
    if (row === undefined) return null;
    const steps = (ctx.statement(STEPS_OF_FLOW).all(id) as StepWithStatus[]).map((r) =>
      toFlowStep(toStoredStep(r), r.job_status),
    );
    return { ...toFlowSummary(toStoredFlow(row as Parameters<typeof toStoredFlow>[0])), steps };
  })();
}

function list(ctx: SqliteContext, query: FlowListQuery): FlowSummary[] {
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: query.limit };
  const add = (clause: string, key: string, value: unknown) => {
    where.push(clause);
    params[key] = value;
  };
  if (query.state !== null) add("state = @state", "state", query.state);
  if (query.name !== null) add("name = @name", "name", query.name);
  if (query.before !== null) add("id < @before", "before", query.before);
  const sql = `SELECT ${FLOW_COLUMNS} FROM soniq_flows ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY id DESC LIMIT @limit`;
  return (ctx.statement(sql).all(params) as Parameters<typeof toStoredFlow>[0][]).map((r) =>
    toFlowSummary(toStoredFlow(r)),
  );
}

const STEP_OF_JOB = `SELECT ${prefixed("s")}, s.flow_id, f.state AS flow_state, j.status AS job_status
  FROM soniq_flow_steps s JOIN soniq_flows f ON f.id = s.flow_id LEFT JOIN soniq_jobs j ON j.id = s.job_id
  WHERE s.job_id = ?`;

function stepOfJob(ctx: SqliteContext, jobId: string): FlowStepMatch | null {
  const row = ctx.statement(STEP_OF_JOB).get(jobId) as
    | (StepWithStatus & { flow_id: string; flow_state: FlowStepMatch["flowState"] })
    | undefined;
  if (row === undefined) return null;
  return {
    flowId: row.flow_id,
    flowState: row.flow_state,
    step: toFlowStep(toStoredStep(row), row.job_status),
  };
}

const PARENTS = `SELECT p.ref, p.state, j.result, d.dead_letter_reason, d.last_error
  FROM soniq_flow_steps s, json_each(s.depends_on) e
  JOIN soniq_flow_steps p ON p.flow_id = s.flow_id AND p.ref = e.value
  LEFT JOIN soniq_jobs j ON j.id = p.job_id
  LEFT JOIN soniq_dead_letter_jobs d ON d.id = p.job_id
  WHERE s.flow_id = ? AND s.ref = ?`;

interface ParentRow {
  ref: string;
  state: StepRow["state"];
  result: string | null;
  dead_letter_reason: string | null;
  last_error: string | null;
}

function parents(ctx: SqliteContext, flowId: string, ref: string): Record<string, ParentOutcome> {
  const out: Record<string, ParentOutcome> = {};
  for (const r of ctx.statement(PARENTS).all(flowId, ref) as ParentRow[]) {
    const outcome = parentOutcome(
      r.state,
      { result: r.result === null ? null : JSON.parse(r.result) },
      r.dead_letter_reason === null
        ? null
        : { deadLetterReason: r.dead_letter_reason, lastError: r.last_error },
    );
    if (outcome !== null) out[r.ref] = outcome;
  }
  return out;
}
