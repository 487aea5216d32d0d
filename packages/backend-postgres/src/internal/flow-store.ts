/**
 * The Postgres `FlowStore` (core's flow-engine.ts runs its programs over it) on one connection inside an
 * open transaction: the backend's own (`inTransaction`) or the caller's `tx` for `flows.start`. The flow
 * row is read `FOR UPDATE`, so the programs of one flow run one after another; the steps a program reads
 * are locked too. Batches (steps, jobs) are one statement each, whatever their size, their columns as typed
 * arrays zipped by `unnest` and their jsonb columns as JSON arrays read by position (internal/job-columns.ts).
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
import { dateColumn, numberArray, textArray, textColumn } from "./array-literal.js";
import { JOB_INSERT_COLUMNS, JOB_SELECT, jobParams, jobUnnest } from "./job-columns.js";
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

/**
 * One step row of flow `$1` per ref, found through the primary key one ref at a time (`OFFSET 0` keeps the
 * planner from flattening the lookup into a join). Written as a join (`flow_id = $1 AND ref = ANY(...)`), the
 * planner reads the flow's statistics, which for a flow started a moment ago (before autovacuum's analyze)
 * say it has a handful of steps: it then reads every step of the flow for each batch (a 10,000-step fan-in read
 * all 10,000 rows in each settle to change ~450). `test/flow-plan.test.ts` checks the plans.
 */
const stepRowOf = (ref: string, columns = "ctid AS row_id", lock = "") =>
  `LATERAL (SELECT ${columns} FROM soniq_flow_steps WHERE flow_id = $1 AND ref = ${ref}${lock} OFFSET 0) t`;

/** `FlowStore.steps`: these steps, locked, in the order of the refs (each ref once). */
const GET_STEPS = `SELECT t.* FROM unnest($2::text[]) AS r(ref),
  ${stepRowOf("r.ref", STEP_COLUMNS, " FOR UPDATE")}`;

/**
 * A flow's new steps, as typed column arrays zipped by `unnest` and the jsonb columns as JSON arrays read by
 * position (as the plain enqueue batch, internal/enqueue.ts): for a 10,000-step fan-in, 180 ms of the flow start
 * went to this insert when it read one jsonb array of objects. `seq` continues after the flow's last step.
 */
const INSERT_STEPS = `INSERT INTO soniq_flow_steps (flow_id, seq, depends_on, ${STEP_COLUMNS})
  SELECT $1, u.n::int + COALESCE((SELECT MAX(seq) FROM soniq_flow_steps WHERE flow_id = $1), 0),
    $5::jsonb -> (u.n::int - 1), u.ref, u.job_id, $4::jsonb -> (u.n::int - 1), u.job_name,
    $6::jsonb -> (u.n::int - 1), $7::jsonb -> (u.n::int - 1), u.on_parent_failure, u.state, u.pending_parents,
    u.reason, u.added_by, u.created_at, u.finished_at
  FROM unnest($2::text[], $3::uuid[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[], $13::text[],
    $14::timestamptz[], $15::timestamptz[])
    WITH ORDINALITY AS u(ref, job_id, job_name, on_parent_failure, state, pending_parents, reason, added_by,
      created_at, finished_at, n)`;

/** `INSERT_STEPS`'s parameters after the flow id, in its `$n` order. */
function insertStepValues(steps: readonly StoredStep[]): unknown[] {
  return [
    textArray(steps.map((s) => s.ref)),
    textArray(steps.map((s) => s.jobId)),
    JSON.stringify(steps.map((s) => s.jobIds)),
    JSON.stringify(steps.map((s) => s.dependsOn)),
    JSON.stringify(steps.map((s) => encodeStepJob(s.job))),
    JSON.stringify(steps.map((s) => s.dependents)),
    textArray(steps.map((s) => s.jobName)),
    textArray(steps.map((s) => s.onParentFailure)),
    textArray(steps.map((s) => s.state)),
    numberArray(steps.map((s) => s.pendingParents)),
    textColumn(steps.map((s) => s.reason)),
    textColumn(steps.map((s) => s.addedBy)),
    dateColumn(steps.map((s) => s.createdAt)),
    dateColumn(steps.map((s) => s.finishedAt)),
  ];
}

/**
 * Changed steps, the same way (one row each, found by the flow's primary key). Only what a program changes is
 * sent: a fan-in child's parents (`depends_on`, up to 10,000 refs) went with every save when the steps travelled
 * as whole jsonb objects.
 */
const SAVE_STEPS = `UPDATE soniq_flow_steps s SET job_id = u.job_id, job_ids = $3::jsonb -> (u.n::int - 1),
    job = $4::jsonb -> (u.n::int - 1), dependents = $5::jsonb -> (u.n::int - 1), state = u.state,
    pending_parents = u.pending_parents, reason = u.reason, finished_at = u.finished_at
  FROM unnest($2::text[], $6::uuid[], $7::text[], $8::int[], $9::text[], $10::timestamptz[])
    WITH ORDINALITY AS u(ref, job_id, state, pending_parents, reason, finished_at, n),
    ${stepRowOf("u.ref")}
  WHERE s.ctid = t.row_id`;

/** `SAVE_STEPS`'s parameters after the flow id, in its `$n` order. */
function saveStepValues(steps: readonly StoredStep[]): unknown[] {
  return [
    textArray(steps.map((s) => s.ref)),
    JSON.stringify(steps.map((s) => s.jobIds)),
    JSON.stringify(steps.map((s) => encodeStepJob(s.job))),
    JSON.stringify(steps.map((s) => s.dependents)),
    textArray(steps.map((s) => s.jobId)),
    textArray(steps.map((s) => s.state)),
    numberArray(steps.map((s) => s.pendingParents)),
    textColumn(steps.map((s) => s.reason)),
    dateColumn(steps.map((s) => s.finishedAt)),
  ];
}

/**
 * Changed steps' state only (`FlowStore.saveStepStates`): what a settle writes for each step it closes and for
 * the dependents it counts down or releases. Five narrow columns, so no step's job travels or is parsed again.
 */
const SAVE_STEP_STATES = `UPDATE soniq_flow_steps s SET state = u.state, pending_parents = u.pending_parents,
    reason = u.reason, finished_at = u.finished_at
  FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[])
    AS u(ref, state, pending_parents, reason, finished_at),
    ${stepRowOf("u.ref")}
  WHERE s.ctid = t.row_id`;

/** `SAVE_STEP_STATES`'s parameters after the flow id, in its `$n` order. */
function saveStateValues(steps: readonly StoredStep[]): unknown[] {
  return [
    textArray(steps.map((s) => s.ref)),
    textArray(steps.map((s) => s.state)),
    numberArray(steps.map((s) => s.pendingParents)),
    textColumn(steps.map((s) => s.reason)),
    dateColumn(steps.map((s) => s.finishedAt)),
  ];
}

/** A flow's jobs, in the form of every bulk job insert (internal/job-columns.ts). */
const INSERT_JOBS = `WITH ins AS (
  INSERT INTO soniq_jobs (${JOB_INSERT_COLUMNS}, flow_id, step_ref)
  SELECT ${JOB_SELECT}, u.flow_id, u.step_ref
  FROM ${jobUnnest([
    ["$13::uuid[]", "flow_id"],
    ["$14::text[]", "step_ref"],
  ])}
  RETURNING queue)
SELECT count(pg_notify('${NEW_JOB_CHANNEL}', q)) FROM (SELECT DISTINCT queue AS q FROM ins) s`;

/** `INSERT_JOBS`'s parameters, in its `$n` order. */
function insertJobValues(jobs: readonly NewJob[]): unknown[] {
  return [
    ...jobParams(jobs, false),
    textColumn(jobs.map((job) => job.flowId)),
    textColumn(jobs.map((job) => job.stepRef)),
  ];
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
    steps: async (flowId, refs) => (await run(GET_STEPS, [flowId, [...new Set(refs)]])).map(toStoredStep),
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
      await run(INSERT_STEPS, [flowId, ...insertStepValues(steps)]);
    },
    saveSteps: async (flowId, steps) => {
      await run(SAVE_STEPS, [flowId, ...saveStepValues(steps)]);
    },
    saveStepStates: async (flowId, steps) => {
      await run(SAVE_STEP_STATES, [flowId, ...saveStateValues(steps)]);
    },
    insertJobs: async (jobs) => {
      await run(INSERT_JOBS, insertJobValues(jobs));
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
