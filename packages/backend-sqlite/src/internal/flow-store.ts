/**
 * The SQLite `FlowStore` (core's flow-engine.ts runs its programs over it), synchronous on one
 * connection inside the caller's IMMEDIATE transaction: the settle's, a cancel's, a replay's, or the
 * caller's own `tx` for `flows.start`.
 */
import {
  decodeStepJob,
  encodeStepJob,
  type FlowProgram,
  type FlowStore,
  type NewJob,
  runFlowSync,
  type StoredFlow,
  type StoredStep,
} from "@soniq/core/backend";
import type { SqliteContext, SqliteDatabase } from "./context.js";
import { jsonList, NOW } from "./sql.js";

export interface FlowRow {
  id: string;
  name: string | null;
  state: StoredFlow["state"];
  created_by: string;
  steps_total: number;
  steps_open: number;
  steps_failed: number;
  steps_held: number;
  created_at: number;
  finished_at: number | null;
}

export interface StepRow {
  ref: string;
  job_id: string;
  job_ids: string;
  job_name: string;
  job: string;
  depends_on?: string;
  dependents: string;
  on_parent_failure: StoredStep["onParentFailure"];
  state: StoredStep["state"];
  pending_parents: number;
  reason: StoredStep["reason"];
  added_by: string | null;
  created_at: number;
  finished_at: number | null;
}

export const FLOW_COLUMNS =
  "id, name, state, created_by, steps_total, steps_open, steps_failed, steps_held, created_at, finished_at";
/** Every step column but `depends_on` (the engine never reads it; a fan-in's holds up to 10,000 refs). */
const STEP_COLUMNS =
  "ref, job_id, job_ids, job_name, job, dependents, on_parent_failure, state, pending_parents, reason, " +
  "added_by, created_at, finished_at";
export const STEP_READ_COLUMNS = `${STEP_COLUMNS}, depends_on`;

export function toStoredFlow(r: FlowRow): StoredFlow {
  return {
    id: r.id,
    name: r.name,
    state: r.state,
    createdBy: r.created_by,
    stepsTotal: r.steps_total,
    stepsOpen: r.steps_open,
    stepsFailed: r.steps_failed,
    stepsHeld: r.steps_held,
    createdAt: new Date(r.created_at),
    finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
  };
}

/**
 * A step as read: its job (the largest column, JSON of the whole prepared job) is decoded the first time it is
 * read. A settle reads every step it closes and never its job (only a released or replayed step's job is
 * used), so a fan-in's settles no longer parse ~450 jobs a batch for nothing.
 */
class LoadedStep implements StoredStep {
  ref: string;
  jobId: string;
  jobIds: string[];
  jobName: string;
  dependsOn: string[];
  dependents: string[];
  onParentFailure: StoredStep["onParentFailure"];
  state: StoredStep["state"];
  pendingParents: number;
  reason: StoredStep["reason"];
  addedBy: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  #jobText: string;
  #job: NewJob | undefined;

  constructor(r: StepRow) {
    this.ref = r.ref;
    this.jobId = r.job_id;
    this.jobIds = JSON.parse(r.job_ids) as string[];
    this.jobName = r.job_name;
    this.dependsOn = r.depends_on === undefined ? [] : (JSON.parse(r.depends_on) as string[]);
    this.dependents = JSON.parse(r.dependents) as string[];
    this.onParentFailure = r.on_parent_failure;
    this.state = r.state;
    this.pendingParents = r.pending_parents;
    this.reason = r.reason;
    this.addedBy = r.added_by;
    this.createdAt = new Date(r.created_at);
    this.finishedAt = r.finished_at === null ? null : new Date(r.finished_at);
    this.#jobText = r.job;
  }

  get job(): NewJob {
    this.#job ??= decodeStepJob(JSON.parse(this.#jobText) as Record<string, unknown>);
    return this.#job;
  }

  set job(job: NewJob) {
    this.#job = job;
  }
}

export function toStoredStep(r: StepRow): StoredStep {
  return new LoadedStep(r);
}

const ms = (d: Date | null) => (d === null ? null : d.getTime());

const GET_FLOW = `SELECT ${FLOW_COLUMNS} FROM soniq_flows WHERE id = ?`;
const GET_STEPS = `SELECT ${STEP_COLUMNS} FROM soniq_flow_steps
  WHERE flow_id = @flowId AND ref IN (SELECT value FROM json_each(@refs))`;
const ALL_STEPS = `SELECT ${STEP_COLUMNS} FROM soniq_flow_steps WHERE flow_id = ? ORDER BY seq`;
const INSERT_FLOW = `INSERT INTO soniq_flows (${FLOW_COLUMNS})
  VALUES (@id, @name, @state, @createdBy, @stepsTotal, @stepsOpen, @stepsFailed, @stepsHeld, @createdAt, @finishedAt)`;
const SAVE_FLOW = `UPDATE soniq_flows SET state = @state, steps_total = @stepsTotal, steps_open = @stepsOpen,
  steps_failed = @stepsFailed, steps_held = @stepsHeld, finished_at = @finishedAt,
  notified_at = CASE WHEN @finishedAt IS NULL THEN NULL ELSE notified_at END WHERE id = @id`;
const NEXT_SEQ = "SELECT COALESCE(MAX(seq), 0) AS n FROM soniq_flow_steps WHERE flow_id = ?";
const INSERT_STEP = `INSERT INTO soniq_flow_steps (flow_id, seq, depends_on, ${STEP_COLUMNS})
  VALUES (@flowId, @seq, @dependsOn, @ref, @jobId, @jobIds, @jobName, @job, @dependents, @onParentFailure,
    @state, @pendingParents, @reason, @addedBy, @createdAt, @finishedAt)`;
const SAVE_STEP = `UPDATE soniq_flow_steps SET job_id = @jobId, job_ids = @jobIds, job = @job,
  dependents = @dependents, state = @state, pending_parents = @pendingParents, reason = @reason,
  finished_at = @finishedAt WHERE flow_id = @flowId AND ref = @ref`;
/** A step's state only (`FlowStore.saveStepStates`), its parameters by position: a settle runs it per step. */
const SAVE_STEP_STATE = `UPDATE soniq_flow_steps SET state = ?, pending_parents = ?, reason = ?, finished_at = ?
  WHERE flow_id = ? AND ref = ?`;
const INSERT_JOB = `INSERT INTO soniq_jobs (id, job_name, args, args_hash, status, attempts, max_attempts, queue,
    priority, unique_job, dedup_key, scheduled_at, producer_id, "group", flow_id, step_ref, args_version, trace_id,
    trace_context, created_at, updated_at)
  VALUES (@id, @jobName, @args, NULL, 'queued', 0, @maxAttempts, @queue, @priority, 0, NULL,
    COALESCE(@scheduledAt, ${NOW}), @producerId, @group, @flowId, @stepRef, @argsVersion, @traceId, @traceContext,
    ${NOW}, ${NOW})`;
const CANCEL_JOBS = `UPDATE soniq_jobs SET status = 'cancelled', updated_at = ${NOW}
  WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('queued', 'processing') RETURNING id`;

function stepParams(flowId: string, s: StoredStep) {
  return {
    flowId,
    ref: s.ref,
    jobId: s.jobId,
    jobIds: JSON.stringify(s.jobIds),
    jobName: s.jobName,
    job: JSON.stringify(encodeStepJob(s.job)),
    dependents: JSON.stringify(s.dependents),
    onParentFailure: s.onParentFailure,
    state: s.state,
    pendingParents: s.pendingParents,
    reason: s.reason,
    addedBy: s.addedBy,
    createdAt: s.createdAt.getTime(),
    finishedAt: ms(s.finishedAt),
  };
}

function flowParams(f: StoredFlow) {
  return {
    id: f.id,
    name: f.name,
    state: f.state,
    createdBy: f.createdBy,
    stepsTotal: f.stepsTotal,
    stepsOpen: f.stepsOpen,
    stepsFailed: f.stepsFailed,
    stepsHeld: f.stepsHeld,
    createdAt: f.createdAt.getTime(),
    finishedAt: ms(f.finishedAt),
  };
}

export function sqliteFlowStore(ctx: SqliteContext, db: SqliteDatabase): FlowStore {
  const st = (sql: string) => ctx.statement(sql, db);
  return {
    flow: (id) => {
      const row = st(GET_FLOW).get(id) as FlowRow | undefined;
      return row === undefined ? null : toStoredFlow(row);
    },
    steps: (flowId, refs) =>
      (st(GET_STEPS).all({ flowId, refs: jsonList(refs) }) as StepRow[]).map(toStoredStep),
    allSteps: (flowId) => (st(ALL_STEPS).all(flowId) as StepRow[]).map(toStoredStep),
    insertFlow: (flow) => {
      st(INSERT_FLOW).run(flowParams(flow));
    },
    saveFlow: (flow) => {
      st(SAVE_FLOW).run(flowParams(flow));
    },
    insertSteps: (flowId, steps) => {
      let seq = (st(NEXT_SEQ).get(flowId) as { n: number }).n;
      const insert = st(INSERT_STEP);
      for (const s of steps) {
        insert.run({ ...stepParams(flowId, s), seq: ++seq, dependsOn: JSON.stringify(s.dependsOn) });
      }
    },
    saveSteps: (flowId, steps) => {
      const save = st(SAVE_STEP);
      for (const s of steps) {
        const {
          createdAt: _c,
          jobName: _n,
          onParentFailure: _p,
          addedBy: _a,
          ...params
        } = stepParams(flowId, s);
        save.run(params);
      }
    },
    saveStepStates: (flowId, steps) => {
      const save = st(SAVE_STEP_STATE);
      for (const s of steps) save.run(s.state, s.pendingParents, s.reason, ms(s.finishedAt), flowId, s.ref);
    },
    insertJobs: (jobs) => {
      const insert = st(INSERT_JOB);
      const queues = new Set<string>();
      for (const job of jobs) {
        insert.run({
          id: job.id,
          jobName: job.jobName,
          args: JSON.stringify(job.args) ?? "null",
          maxAttempts: job.maxAttempts,
          queue: job.queue,
          priority: job.priority,
          scheduledAt: ms(job.scheduledAt),
          producerId: job.producerId,
          group: job.group,
          flowId: job.flowId,
          stepRef: job.stepRef,
          // A step stored before versions existed has none in its JSON: unversioned.
          argsVersion: job.argsVersion ?? null,
          traceId: job.traceId ?? null,
          traceContext: job.traceContext == null ? null : JSON.stringify(job.traceContext),
        });
        queues.add(job.queue);
      }
      for (const queue of queues) ctx.notify(queue);
    },
    cancelJobs: (ids) => (st(CANCEL_JOBS).all(jsonList(ids)) as { id: string }[]).map((r) => r.id),
  };
}

/** Runs a flow program on `db` (inside the transaction the caller holds open). */
export function runFlow<T>(ctx: SqliteContext, program: FlowProgram<T>, db: SqliteDatabase = ctx.db): T {
  return runFlowSync(program, sqliteFlowStore(ctx, db));
}
