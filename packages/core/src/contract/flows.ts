/**
 * The `flows` facet: start, read, list and cancel workflows (DESIGN.md section 15). The release of a
 * waiting step is not a method: it is written by `runs.settle` (a `done` or `dead_letter` item carrying
 * `flow`), by `jobs.cancel`, and by `deadLetters.replay`/`purge` of a step's job, in the same transaction
 * as that write. What a parent's outcome does to each dependent is core's rule (`flow-rules.ts`,
 * exported from `@soniq/core/backend`: `dependentEffect`, `flowStateOf`, `admitStep`); a backend stores
 * the rows and applies it.
 *
 * Layout every backend keeps (names are public):
 * - `soniq_flows`: id, name, state, the step counters `steps_total`, `steps_open`, `steps_failed`,
 *   `steps_held` (so a step's change updates the flow's state in O(1)), created_at, finished_at, notified_at
 *   (when the `flow.finished` sweep wrote its deliveries; null again when a replay reopens the flow).
 * - `soniq_flow_steps`: (flow_id, ref) primary key, job_id (unique: the current job), job_ids (history),
 *   job_name, the prepared job (`job`: the row to insert on release), depends_on, dependents (the refs that
 *   depend on it: the release walks its own dependents, never the flow), on_parent_failure, state,
 *   pending_parents (the counter the release decrements), reason, added_by, created_at, finished_at.
 * - `soniq_jobs` and `soniq_dead_letter_jobs` carry `flow_id` and `step_ref`.
 */

import type { Flow, FlowStep, FlowSummary, ParentOutcome } from "../common/types.js";
import type { FlowState, ParentFailurePolicy } from "../schema/constants.js";
import type { AuditRecord } from "./audit.js";
import type { EnqueueOptions, NewJob } from "./jobs.js";
import type { NewWebhookDelivery } from "./webhooks.js";

/** A step to write. Core validated the graph and prepared the job (`job.flowId`/`job.stepRef` set). */
export interface NewFlowStep {
  ref: string;
  job: NewJob;
  dependsOn: readonly string[];
  onParentFailure: ParentFailurePolicy;
  /** The step whose `ctx.flow.add` added it; null at start. */
  addedBy: string | null;
}

/** A flow to start: its row, every step, and (in the same transaction) the jobs of the steps without parents. */
export interface NewFlow {
  id: string;
  name: string | null;
  /** The actor that started it (`Flow.createdBy`). */
  createdBy: string;
  steps: readonly NewFlowStep[];
}

/** A normalised flow filter: every key present, `null` = no filter on it. Newest first (ids are UUIDv7). */
export interface FlowListQuery {
  state: FlowState | null;
  name: string | null;
  /** 1..1000. */
  limit: number;
  /** The flows older than this flow id (keyset paging); null = from the newest. */
  before: string | null;
}

/** What `flows.cancel` did: whether the flow was open, and the jobs it cancelled (core aborts local runs). */
export interface FlowCancelResult {
  cancelled: boolean;
  cancelledJobIds: string[];
}

/** The flow side of a `done` or `dead_letter` settlement of a step's job (absent for other jobs). */
export interface FlowSettlement {
  flowId: string;
  stepRef: string;
  /** `ctx.flow.add`'s steps, written with the `done` (ignored on `dead_letter`). */
  add: readonly NewFlowStep[];
}

/** A step found by one of its job ids (explain, `ctx.flow`). */
export interface FlowStepMatch {
  flowId: string;
  flowState: FlowState;
  step: FlowStep;
}

export interface FlowsFacet<TTx = unknown> {
  /** Writes the flow, its steps and its root jobs in one transaction (the caller's with `tx`). */
  start(flow: NewFlow, options: EnqueueOptions<TTx>): Promise<void>;
  get(id: string): Promise<Flow | null>;
  list(query: FlowListQuery): Promise<FlowSummary[]>;
  /**
   * Cancels an open flow: waiting and held steps cancelled (`flow_cancelled`), queued and processing jobs
   * cancelled, the flow `cancelled`; with `audit`, its row in the same transaction. Not cancelled (and no
   * job touched) when the flow is missing or already finished.
   */
  cancel(id: string, audit?: AuditRecord): Promise<FlowCancelResult>;
  /** The step whose current or earlier job has this id, or null. */
  stepOfJob(jobId: string): Promise<FlowStepMatch | null>;
  /** The outcome of each parent of a step, by ref (a parent not terminal yet is left out). */
  parents(flowId: string, ref: string): Promise<Record<string, ParentOutcome>>;
  /**
   * The `flow.finished` outbox, in one transaction: takes up to `limit` (>= 1) finished flows
   * (`finished_at` set) whose `notified_at` is null, oldest finish first (Postgres skips rows another
   * sweep holds: FOR UPDATE SKIP LOCKED), sets their `notified_at` to now, and writes the deliveries
   * `deliveries` builds for them (it may return none: they are marked all the same). Returns how many
   * flows it marked; fewer than `limit` means none is left.
   */
  notifyFinished(
    limit: number,
    deliveries: (flows: readonly FlowSummary[]) => readonly NewWebhookDelivery[],
  ): Promise<number>;
}
