/**
 * The Postgres `FlowStore` (core's flow-engine.ts runs its programs over it) on one connection inside an
 * open transaction: the backend's own (`inTransaction`) or the caller's `tx` for `flows.start`. The flow
 * row is read `FOR UPDATE`, so the programs of one flow run one after another; the steps a program reads
 * are locked too. Batches (steps, jobs) are one statement each (jsonb_to_recordset), whatever their size.
 */
import {
  type AsyncFlowStore,
  decodeStepJob,
  encodeStepJob,
  type FlowProgram,
  type NewJob,
  runFlowAsync,
  type StoredFlow,
  type StoredStep,
} from "@soniq/core/backend";
import { NEW_JOB_CHANNEL } from "./listen-client.js";
import { type Row, toDate } from "./rows.js";
import type { TxRunner } from "./tx.js";

export const FLOW_COLUMNS =
  "id, name, state, created_by, steps_total, steps_open, steps_failed, steps_held, created_at, finished_at";
/** Every step column but `depends_on` (the engine never reads it; a fan-in's holds up to 10,000 refs). */
export const STEP_COLUMNS =
  "ref, job_id, job_ids, job_name, job, dependents, on_parent_failure, state, pending_parents, reason, " +
  "added_by, created_at, finished_at";

const dateOrNull = (v: unknown) => (v === null || v === undefined ? null : toDate(v));

export function toStoredFlow(r: Row): StoredFlow {
  return {
    id: String(r.id),
    name: r.name === null ? null : String(r.name),
    state: r.state as StoredFlow["state"],
    createdBy: String(r.created_by),
    stepsTotal: Number(r.steps_total),
    stepsOpen: Number(r.steps_open),
    stepsFailed: Number(r.steps_failed),
    stepsHeld: Number(r.steps_held),
    createdAt: toDate(r.created_at),
    finishedAt: dateOrNull(r.finished_at),
  };
}

export function toStoredStep(r: Row): StoredStep {
  return {
    ref: String(r.ref),
    jobId: String(r.job_id),
    jobIds: r.job_ids as string[],
    jobName: String(r.job_name),
    job: decodeStepJob(r.job as Record<string, unknown>),
    dependsOn: (r.depends_on as string[] | undefined) ?? [],
    dependents: r.dependents as string[],
    onParentFailure: r.on_parent_failure as StoredStep["onParentFailure"],
    state: r.state as StoredStep["state"],
    pendingParents: Number(r.pending_parents),
    reason: (r.reason ?? null) as StoredStep["reason"],
    addedBy: r.added_by === null ? null : String(r.added_by),
    createdAt: toDate(r.created_at),
    finishedAt: dateOrNull(r.finished_at),
  };
}

const STEP_RECORD = `x(ref text, seq int, job_id uuid, job_ids jsonb, job_name text, job jsonb, depends_on jsonb,
  dependents jsonb, on_parent_failure text, state text, pending_parents int, reason text, added_by text,
  created_at timestamptz, finished_at timestamptz)`;

const INSERT_STEPS = `INSERT INTO soniq_flow_steps (flow_id, seq, depends_on, ${STEP_COLUMNS})
  SELECT $1, x.seq + COALESCE((SELECT MAX(seq) FROM soniq_flow_steps WHERE flow_id = $1), 0), x.depends_on,
    ${STEP_COLUMNS.split(", ")
      .map((c) => `x.${c}`)
      .join(", ")}
  FROM jsonb_to_recordset($2::jsonb) AS ${STEP_RECORD}`;

const SAVE_STEPS = `UPDATE soniq_flow_steps s SET job_id = x.job_id, job_ids = x.job_ids, job = x.job,
    dependents = x.dependents, state = x.state, pending_parents = x.pending_parents, reason = x.reason,
    finished_at = x.finished_at
  FROM jsonb_to_recordset($2::jsonb) AS ${STEP_RECORD}
  WHERE s.flow_id = $1 AND s.ref = x.ref`;

const INSERT_JOBS = `WITH ins AS (
  INSERT INTO soniq_jobs (id, job_name, args, queue, priority, max_attempts, scheduled_at, producer_id, "group",
    flow_id, step_ref, trace_id, trace_context)
  SELECT x.id, x.job_name, COALESCE(x.args, 'null'::jsonb), x.queue, x.priority, x.max_attempts, COALESCE(x.scheduled_at, now()),
    x.producer_id, x."group", x.flow_id, x.step_ref, x.trace_id, x.trace_context
  FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, job_name text, args jsonb, queue text, priority int,
    max_attempts int, scheduled_at timestamptz, producer_id text, "group" text, flow_id uuid, step_ref text,
    trace_id text, trace_context jsonb)
  RETURNING queue)
SELECT count(pg_notify('${NEW_JOB_CHANNEL}', q)) FROM (SELECT DISTINCT queue AS q FROM ins) s`;

function stepRecord(s: StoredStep, seq: number) {
  return {
    ref: s.ref,
    seq,
    job_id: s.jobId,
    job_ids: s.jobIds,
    job_name: s.jobName,
    job: encodeStepJob(s.job),
    depends_on: s.dependsOn,
    dependents: s.dependents,
    on_parent_failure: s.onParentFailure,
    state: s.state,
    pending_parents: s.pendingParents,
    reason: s.reason,
    added_by: s.addedBy,
    created_at: s.createdAt.toISOString(),
    finished_at: s.finishedAt?.toISOString() ?? null,
  };
}

function jobRecord(job: NewJob) {
  return {
    id: job.id,
    job_name: job.jobName,
    args: job.args ?? null,
    queue: job.queue,
    priority: job.priority,
    max_attempts: job.maxAttempts,
    scheduled_at: job.scheduledAt?.toISOString() ?? null,
    producer_id: job.producerId,
    group: job.group,
    flow_id: job.flowId,
    step_ref: job.stepRef,
    trace_id: job.traceId ?? null,
    trace_context: job.traceContext ?? null,
  };
}

const flowValues = (f: StoredFlow) => [
  f.id,
  f.name,
  f.state,
  f.createdBy,
  f.stepsTotal,
  f.stepsOpen,
  f.stepsFailed,
  f.stepsHeld,
  f.createdAt,
  f.finishedAt,
];

export function pgFlowStore(run: TxRunner): AsyncFlowStore {
  return {
    flow: async (id) => {
      const rows = await run(`SELECT ${FLOW_COLUMNS} FROM soniq_flows WHERE id = $1 FOR UPDATE`, [id]);
      return rows[0] === undefined ? null : toStoredFlow(rows[0]);
    },
    steps: async (flowId, refs) =>
      (
        await run(
          `SELECT ${STEP_COLUMNS} FROM soniq_flow_steps WHERE flow_id = $1 AND ref = ANY($2::text[]) FOR UPDATE`,
          [flowId, refs],
        )
      ).map(toStoredStep),
    allSteps: async (flowId) =>
      (
        await run(`SELECT ${STEP_COLUMNS} FROM soniq_flow_steps WHERE flow_id = $1 ORDER BY seq FOR UPDATE`, [
          flowId,
        ])
      ).map(toStoredStep),
    insertFlow: async (flow) => {
      await run(
        `INSERT INTO soniq_flows (${FLOW_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        flowValues(flow),
      );
    },
    saveFlow: async (flow) => {
      await run(
        `UPDATE soniq_flows SET state = $2, steps_total = $3, steps_open = $4, steps_failed = $5,
          steps_held = $6, finished_at = $7::timestamptz,
          notified_at = CASE WHEN $7::timestamptz IS NULL THEN NULL ELSE notified_at END WHERE id = $1`,
        [
          flow.id,
          flow.state,
          flow.stepsTotal,
          flow.stepsOpen,
          flow.stepsFailed,
          flow.stepsHeld,
          flow.finishedAt,
        ],
      );
    },
    insertSteps: async (flowId, steps) => {
      await run(INSERT_STEPS, [flowId, JSON.stringify(steps.map((s, i) => stepRecord(s, i + 1)))]);
    },
    saveSteps: async (flowId, steps) => {
      await run(SAVE_STEPS, [flowId, JSON.stringify(steps.map((s) => stepRecord(s, 0)))]);
    },
    insertJobs: async (jobs) => {
      await run(INSERT_JOBS, [JSON.stringify(jobs.map(jobRecord))]);
    },
    cancelJobs: async (ids) =>
      (
        await run(
          `UPDATE soniq_jobs SET status = 'cancelled', updated_at = now()
            WHERE id = ANY($1::uuid[]) AND status IN ('queued', 'processing') RETURNING id`,
          [ids],
        )
      ).map((r) => String(r.id)),
  };
}

/** Runs a flow program on the transaction `run` belongs to. */
export function runFlow<T>(run: TxRunner, program: FlowProgram<T>): Promise<T> {
  return runFlowAsync(program, pgFlowStore(run));
}

/** A `TxRunner` over a pg client the backend checked out (inside `inTransaction`). */
export function clientRunner(client: {
  query: (text: string, values: unknown[]) => Promise<{ rows: Row[] }>;
}): TxRunner {
  return async (text, values) => (await client.query(text, values)).rows;
}
