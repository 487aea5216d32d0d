/**
 * The flows facet: start (inside the caller's `tx` when given), read, list and cancel workflows. Every
 * change is one of core's flow programs (flow-engine.ts) run on internal/flow-store.ts in one transaction;
 * the releases ride on the writes that cause them (runs.ts, jobs.ts, dead-letters.ts).
 */
import {
  type AuditRecord,
  cancelFlow,
  type Flow,
  type FlowCancelResult,
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
import { type PgContext, query, readQuery } from "./internal/context.js";
import { sqlState } from "./internal/errors.js";
import {
  clientRunner,
  FLOW_COLUMNS,
  runFlow,
  STEP_COLUMNS,
  toStoredFlow,
  toStoredStep,
} from "./internal/flow-store.js";
import { FINISHED_CHANNEL, FINISHED_IDS_PER_NOTIFY } from "./internal/listen-client.js";
import type { Row } from "./internal/rows.js";
import { inTransaction, type PgTx, txRunner } from "./internal/tx.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function flowsFacet(ctx: PgContext): FlowsFacet<PgTx> {
  return {
    start: async (flow, options) => {
      const program = () => startFlow(flow, flow.createdBy, new Date());
      if (options.tx !== undefined) {
        await runFlow(txRunner(options.tx, "flows.start"), program());
        return;
      }
      await inTransaction(ctx, "flows.start", (client) => runFlow(clientRunner(client), program()));
    },
    get: (id) => get(ctx, id),
    list: (query) => list(ctx, query),
    cancel: (id, audit) => cancel(ctx, id, audit),
    stepOfJob: (jobId) => stepOfJob(ctx, jobId),
    parents: (flowId, ref) => parents(ctx, flowId, ref),
    notifyFinished: (limit, deliveries) => notifyFinished(ctx, limit, deliveries),
  };
}

// Takes the flows (skipping those a concurrent sweep holds) and marks them in one statement.
const MARK_FINISHED = `WITH taken AS (
    SELECT id FROM soniq_flows WHERE finished_at IS NOT NULL AND notified_at IS NULL
    ORDER BY finished_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
  UPDATE soniq_flows f SET notified_at = now() FROM taken WHERE f.id = taken.id
  RETURNING ${FLOW_COLUMNS.split(", ")
    .map((c) => `f.${c}`)
    .join(", ")}`;

/** The `flow.finished` outbox: the flows marked and their deliveries written in one transaction. */
async function notifyFinished(
  ctx: PgContext,
  limit: number,
  deliveries: (flows: readonly FlowSummary[]) => readonly NewWebhookDelivery[],
): Promise<number> {
  return inTransaction(ctx, "flows.notifyFinished", async (client) => {
    const res = await client.query<Row>(MARK_FINISHED, [limit]);
    if (res.rows.length === 0) return 0;
    const flows = res.rows
      .map((r) => toFlowSummary(toStoredFlow(r)))
      .sort((a, b) => Number(a.finishedAt) - Number(b.finishedAt) || (a.id < b.id ? -1 : 1));
    await writeDeliveries(client, deliveries(flows));
    return flows.length;
  });
}

/**
 * Cancels a flow in one transaction. Its open steps' job rows are locked first, then the flow row: the order a
 * settle or a job cancel takes them. Workers settling several of the flow's jobs in one statement may still
 * lock them in another order than this one; PostgreSQL then aborts one of the two transactions (a deadlock,
 * 40P01), and the cancel runs again (a worker's settle retries on its own), at most three times.
 */
async function cancel(ctx: PgContext, id: string, audit: AuditRecord | undefined): Promise<FlowCancelResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(ctx, "flows.cancel", async (client) => {
        await client.query(LOCK_OPEN_JOBS, [id]);
        const cancelled = await runFlow(clientRunner(client), cancelFlow(id, new Date()));
        if (cancelled === null) return { cancelled: false, cancelledJobIds: [] };
        if (audit) await writeAudit(client, audit);
        // The cancelled jobs finished: waiters hear them on the finished channel at commit, as after jobs.cancel.
        await client.query(FINISHED_NOTIFY, [cancelled]);
        return { cancelled: true, cancelledJobIds: cancelled };
      });
    } catch (err) {
      if (attempt >= 3 || sqlState(err) !== "40P01") throw err;
    }
  }
}

// The ids in NOTIFYs of at most FINISHED_IDS_PER_NOTIFY (a payload under Postgres's 8000 bytes), as a settle sends.
const FINISHED_NOTIFY = `SELECT pg_notify('${FINISHED_CHANNEL}', string_agg(id, ',')) FROM (
    SELECT id, (row_number() OVER ()) / ${FINISHED_IDS_PER_NOTIFY} AS chunk FROM unnest($1::text[]) AS id) c
  GROUP BY chunk`;

const LOCK_OPEN_JOBS = `SELECT j.id FROM soniq_jobs j
  WHERE j.id IN (SELECT job_id FROM soniq_flow_steps WHERE flow_id = $1 AND state = 'queued')
  ORDER BY j.id FOR UPDATE`;

const prefixed = (alias: string) =>
  `${STEP_COLUMNS.split(", ")
    .map((c) => `${alias}.${c}`)
    .join(", ")}, ${alias}.depends_on`;

async function get(ctx: PgContext, id: string): Promise<Flow | null> {
  // One statement, one snapshot: the flow row and its steps (with their jobs' statuses) agree.
  const res = await readQuery<Row>(ctx, "flows.get", {
    text: `SELECT row_to_json(f) AS flow,
        COALESCE((SELECT json_agg(json_build_object('step', row_to_json(s), 'job_status', j.status) ORDER BY s.seq)
          FROM soniq_flow_steps s LEFT JOIN soniq_jobs j ON j.id = s.job_id WHERE s.flow_id = f.id), '[]') AS steps
      FROM (SELECT ${FLOW_COLUMNS} FROM soniq_flows WHERE id = $1) f`,
    values: [id],
  });
  const row = res.rows[0];
  if (row === undefined) return null;
  const steps = (row.steps as { step: Row; job_status: JobStatus | null }[]).map((s) =>
    toFlowStep(toStoredStep(s.step), s.job_status),
  );
  return { ...toFlowSummary(toStoredFlow(row.flow as Row)), steps };
}

async function list(ctx: PgContext, query: FlowListQuery): Promise<FlowSummary[]> {
  const res = await readQuery<Row>(ctx, "flows.list", {
    text: `SELECT ${FLOW_COLUMNS} FROM soniq_flows
      WHERE ($1::text IS NULL OR state = $1) AND ($2::text IS NULL OR name = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    values: [query.state, query.name, query.before, query.limit],
  });
  return res.rows.map((r) => toFlowSummary(toStoredFlow(r)));
}

async function stepOfJob(ctx: PgContext, jobId: string): Promise<FlowStepMatch | null> {
  const res = await query<Row>(ctx, "flows.stepOfJob", {
    text: `SELECT ${prefixed("s")}, s.flow_id, f.state AS flow_state, j.status AS job_status
      FROM soniq_flow_steps s JOIN soniq_flows f ON f.id = s.flow_id LEFT JOIN soniq_jobs j ON j.id = s.job_id
      WHERE s.job_id = $1`,
    values: [jobId],
  });
  const row = res.rows[0];
  if (row === undefined) return null;
  return {
    flowId: String(row.flow_id),
    flowState: row.flow_state as FlowStepMatch["flowState"],
    step: toFlowStep(toStoredStep(row), (row.job_status ?? null) as JobStatus | null),
  };
}

// On the primary: a released step reads its parents at once (a replica may lag behind the release).
async function parents(ctx: PgContext, flowId: string, ref: string): Promise<Record<string, ParentOutcome>> {
  const res = await query<Row>(ctx, "flows.parents", {
    text: `SELECT p.ref, p.state, j.result, d.dead_letter_reason, d.last_error
      FROM soniq_flow_steps s
      CROSS JOIN LATERAL jsonb_array_elements_text(s.depends_on) AS e(ref)
      JOIN soniq_flow_steps p ON p.flow_id = s.flow_id AND p.ref = e.ref
      LEFT JOIN soniq_jobs j ON j.id = p.job_id
      LEFT JOIN soniq_dead_letter_jobs d ON d.id = p.job_id
      WHERE s.flow_id = $1 AND s.ref = $2`,
    values: [flowId, ref],
  });
  const out: Record<string, ParentOutcome> = {};
  for (const r of res.rows) {
    const outcome = parentOutcome(
      r.state as Parameters<typeof parentOutcome>[0],
      { result: r.result ?? null },
      r.dead_letter_reason === null
        ? null
        : {
            deadLetterReason: String(r.dead_letter_reason),
            lastError: (r.last_error ?? null) as string | null,
          },
    );
    if (outcome !== null) out[String(r.ref)] = outcome;
  }
  return out;
}
