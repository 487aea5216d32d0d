/**
 * The rules of a workflow, written once for every backend (DESIGN.md section 15). Pure functions over plain
 * rows: what a parent's outcome does to one dependent, the flow's state from its step counters, the state a
 * new step starts in. `flow-engine.ts` runs them inside a backend's transaction.
 *
 * Step state machine (the stored states; `queued` covers the job's queued and processing):
 *   waiting  --last parent done (or settled under "run")-->  queued (its job inserted: the release)
 *   waiting  --a parent dead-lettered, policy "hold"-->       held
 *   held     --the held parent's replay done, none pending--> queued
 *   waiting|held --a parent cancelled or purged, or dead-lettered under "cancel"--> cancelled
 *   queued   --its job done | dead-lettered | cancelled-->   done | dead_lettered | cancelled
 *   dead_lettered --its dead letter replayed-->              queued (the new job id appended)
 */

import type {
  FlowState,
  FlowStep,
  FlowStepReason,
  FlowStepState,
  FlowSummary,
  JobStatus,
  ParentFailurePolicy,
  ParentOutcome,
} from "../common/types.js";
import type { NewJob } from "../contract/jobs.js";

/** A step as the engine reads and writes it (the `soniq_flow_steps` row, in a backend's own shape). */
export interface StoredStep {
  ref: string;
  /** The current job id (minted at start, replaced by a replay). */
  jobId: string;
  jobIds: string[];
  jobName: string;
  /** The prepared job row, inserted on release (its `id` is `jobId`). */
  job: NewJob;
  dependsOn: string[];
  /** The refs depending on this step (written when a dependent is created). */
  dependents: string[];
  onParentFailure: ParentFailurePolicy;
  /** A stored state: never `processing` (reads derive it from the job). */
  state: Exclude<FlowStepState, "processing">;
  pendingParents: number;
  reason: FlowStepReason | null;
  addedBy: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A flow as the engine reads and writes it (the `soniq_flows` row). */
export interface StoredFlow {
  id: string;
  name: string | null;
  state: FlowState;
  createdBy: string | null;
  stepsTotal: number;
  /** Steps waiting, queued (or processing) or held. */
  stepsOpen: number;
  /** Steps dead-lettered or cancelled. */
  stepsFailed: number;
  stepsHeld: number;
  createdAt: Date;
  finishedAt: Date | null;
}

/** What became of a parent, as its dependents see it. */
export type ParentEvent = "done" | "dead_lettered" | "cancelled" | "purged";

/**
 * What a dependent does about one parent's event:
 * - `settle`: that parent no longer blocks it (the pending counter goes down; at 0 the step is released);
 * - `hold`: it waits for an operator (the parent's replay or purge);
 * - `cancel`: it is cancelled, and its own dependents see a cancelled parent;
 * - `none`: nothing changes.
 * `first` is false when the parent already had an outcome before (it was dead-lettered and replayed): a
 * `run` dependent counted that parent then, so it must not count it twice.
 */
export function dependentEffect(
  policy: ParentFailurePolicy,
  event: ParentEvent,
  first: boolean,
): "settle" | "hold" | "cancel" | "none" {
  if (event === "done") return policy === "run" && !first ? "none" : "settle";
  if (event === "purged") return policy === "hold" ? "cancel" : "none";
  if (policy === "run") return first ? "settle" : "none";
  if (event === "dead_lettered") return policy === "hold" ? "hold" : "cancel";
  return "cancel";
}

/** The reason a dependent records when a parent's event cancels or holds it. */
export function dependentReason(event: ParentEvent): FlowStepReason {
  if (event === "purged") return "parent_purged";
  if (event === "cancelled") return "parent_cancelled";
  return "parent_dead_lettered";
}

/** Whether a stored step state is terminal for the flow's counters (a replay may reopen `dead_lettered`). */
export function isClosedStep(state: StoredStep["state"]): boolean {
  return state === "done" || state === "dead_lettered" || state === "cancelled";
}

/**
 * The flow's state from its counters: `cancelled` stays; no open step: `succeeded` when none failed, else
 * `failed`; a held step: `held`; else `running`. (A replay reopens a `failed` flow: it runs again.)
 */
export function flowStateOf(flow: StoredFlow): FlowState {
  if (flow.state === "cancelled") return "cancelled";
  if (flow.stepsOpen === 0) return flow.stepsFailed === 0 ? "succeeded" : "failed";
  return flow.stepsHeld > 0 ? "held" : "running";
}

/**
 * The state a new step starts in, from its parents' stored states (a step given at start has only waiting
 * or new parents; one added by `ctx.flow.add` may depend on finished steps).
 */
export function admitStep(
  policy: ParentFailurePolicy,
  parents: readonly Pick<StoredStep, "state" | "jobIds">[],
): { state: "waiting" | "held" | "cancelled" | "queued"; pending: number; reason: FlowStepReason | null } {
  let pending = 0;
  let held = false;
  for (const parent of parents) {
    if (parent.state === "done") continue;
    if (parent.state !== "dead_lettered" && parent.state !== "cancelled") {
      pending++;
      continue;
    }
    const effect = dependentEffect(policy, parent.state, true);
    if (effect === "cancel") return { state: "cancelled", pending: 0, reason: dependentReason(parent.state) };
    if (effect === "hold") {
      held = true;
      pending++;
    }
  }
  if (held) return { state: "held", pending, reason: "parent_dead_lettered" };
  return { state: pending === 0 ? "queued" : "waiting", pending, reason: null };
}

/** A stored step as `flows.get` shows it: `queued` becomes `processing` while its job runs. */
export function toFlowStep(step: StoredStep, jobStatus: JobStatus | null): FlowStep {
  return {
    ref: step.ref,
    jobId: step.jobId,
    jobIds: [...step.jobIds],
    jobName: step.jobName,
    state: step.state === "queued" && jobStatus === "processing" ? "processing" : step.state,
    dependsOn: [...step.dependsOn],
    onParentFailure: step.onParentFailure,
    pendingParents: step.pendingParents,
    reason: step.reason,
    addedBy: step.addedBy,
    createdAt: step.createdAt,
    finishedAt: step.finishedAt,
  };
}

/** A stored flow as `flows.list` shows it. */
export function toFlowSummary(flow: StoredFlow): FlowSummary {
  return {
    id: flow.id,
    name: flow.name,
    state: flow.state,
    counts: {
      total: flow.stepsTotal,
      open: flow.stepsOpen,
      done: flow.stepsTotal - flow.stepsOpen - flow.stepsFailed,
      failed: flow.stepsFailed,
      held: flow.stepsHeld,
    },
    createdBy: flow.createdBy ?? "api",
    createdAt: flow.createdAt,
    finishedAt: flow.finishedAt,
  };
}

/**
 * A parent's outcome for `ctx.flow.parents()`, from its step's state and what its job left: the done job's
 * result, or the dead letter's reason and error. Null for a parent that has no outcome yet.
 */
export function parentOutcome(
  state: StoredStep["state"],
  done: { result: unknown } | null,
  dead: { deadLetterReason: string; lastError: string | null } | null,
): ParentOutcome | null {
  if (state === "done") return { status: "done", result: done?.result ?? null };
  if (state === "cancelled") return { status: "cancelled" };
  if (state === "dead_lettered") {
    return {
      status: "dead_lettered",
      reason: dead?.deadLetterReason ?? "purged",
      lastError: dead?.lastError ?? null,
    };
  }
  return null;
}

/** A step's prepared job as stored JSON (`soniq_flow_steps.job`): `scheduledAt` as epoch ms. */
export function encodeStepJob(job: NewJob): Record<string, unknown> {
  return { ...job, scheduledAt: job.scheduledAt === null ? null : job.scheduledAt.getTime() };
}

/** The prepared job back from `encodeStepJob`'s JSON. */
export function decodeStepJob(stored: Record<string, unknown>): NewJob {
  const at = stored.scheduledAt;
  return { ...(stored as unknown as NewJob), scheduledAt: typeof at === "number" ? new Date(at) : null };
}
