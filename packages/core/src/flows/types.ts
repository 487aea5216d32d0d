/**
 * The workflow types, re-exported by types.ts.
 *
 * Workflows, the words: a *flow* is a set of *steps* keyed by *ref*; a step is a job plus the refs it
 * *depends on* (its *parents*). A step without parents is enqueued when the flow starts; the others
 * *wait* (no job row yet, never claimable) until their last parent is done, then they are *released*
 * (their job is inserted, with the id minted at start). A dead-lettered parent *holds* its dependents
 * (policy `hold`), cancels them (`cancel`) or releases them anyway (`run`).
 */
import type { FlowState, FlowStepState, ParentFailurePolicy } from "../schema/constants.js";

/** Why a step was cancelled or held, as `FlowStep.reason` records it. */
export type FlowStepReason =
  | "parent_dead_lettered"
  | "parent_cancelled"
  | "parent_purged"
  | "flow_cancelled"
  | "job_cancelled";

/** One step of a flow, as `flows.get` returns it. */
export interface FlowStep {
  ref: string;
  /** The job of the step: minted at start, the latest replay's once its dead letter was replayed. */
  jobId: string;
  /** Every job id the step had, oldest first (a replay appends one). */
  jobIds: string[];
  jobName: string;
  state: FlowStepState;
  dependsOn: string[];
  onParentFailure: ParentFailurePolicy;
  /** Parents not done yet (a `run` step counts a failed parent as settled). */
  pendingParents: number;
  /** Why the step is held or cancelled; null otherwise. */
  reason: FlowStepReason | null;
  /** The ref of the step that added it with `ctx.flow.add`, null for a step given at start. */
  addedBy: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A flow's step counts (`open` = not terminal; `failed` = dead-lettered or cancelled). */
export interface FlowCounts {
  total: number;
  open: number;
  done: number;
  failed: number;
  held: number;
}

/** A `soniq_flows` row as `flows.list` returns it. */
export interface FlowSummary {
  id: string;
  /** The label given at start, or null. */
  name: string | null;
  state: FlowState;
  counts: FlowCounts;
  /** The `actor` given to `flows.start` (default "api"). */
  createdBy: string;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A flow with its steps (`flows.get`), in the order they were given (then added). */
export interface Flow extends FlowSummary {
  steps: FlowStep[];
}

/** A parent's outcome as `ctx.flow.parents()` shows it, by ref. */
export type ParentOutcome =
  | { status: "done"; result: unknown }
  | { status: "dead_lettered"; reason: string; lastError: string | null }
  | { status: "cancelled" };

/** A step's enqueue options (`dedupKey` and `unique` do not apply: a step's job is never deduplicated). */
export interface FlowStepOptions {
  queue?: string;
  priority?: number;
  /** Due at this instant (a released step still waits for it). */
  runAt?: Date;
  /** Due this many ms after the flow starts (or `ctx.flow.add`), not after the release. */
  delayMs?: number;
  group?: string;
}

/** One step of `flows.start` or `ctx.flow.add`, keyed by its ref. */
export interface FlowStepDefinition {
  /** A job definition (what `soniq.job()` returned) or a job name. */
  job: string | { readonly name: string };
  args?: unknown;
  options?: FlowStepOptions;
  /** The refs this step waits for (its parents). */
  dependsOn?: readonly string[];
  /** What a dead-lettered (or cancelled) parent does to this step. Default `"hold"`. */
  onParentFailure?: ParentFailurePolicy;
}

/** `ctx.flow` in the handler of a flow step's job. */
export interface FlowContext {
  /** The flow's id. */
  readonly id: string;
  /** This step's ref. */
  readonly ref: string;
  /** Each parent's outcome by ref: done with its result, dead-lettered (under `"run"`), or cancelled. */
  parents(): Promise<Record<string, ParentOutcome>>;
  /**
   * Adds steps (validated now: `SONIQ_INVALID_FLOW`), written atomically with this step's `done`: a run that
   * fails adds nothing, so a retried step never adds twice. They may depend on this step and on any step of
   * the flow. Resolves with the new steps' job ids by ref.
   */
  add(steps: Record<string, FlowStepDefinition>): Promise<Record<string, string>>;
}
