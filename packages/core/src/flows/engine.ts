/**
 * The workflow engine: every change a flow goes through (start, a step's job finishing, a replay or purge
 * of a step's dead letter, a cancel), written once as programs over a small row store that each backend
 * provides inside its own transaction. A program is a generator that yields store calls; `runFlowSync`
 * drives it over a synchronous store (SQLite, memory), `runFlowAsync` over an asynchronous one (Postgres),
 * so the rules (`flow-rules.ts`) live here and nowhere else.
 *
 * Every program locks the flow row first (`flow`), so changes to one flow are serialised, then reads only
 * the rows it touches: a finished parent reads itself and its own dependents (a counter each), never the
 * rest of the flow; only `cancelFlow` reads every step.
 */

import { type AsyncStore, type Program, runAsync, runSync } from "../common/program.js";
import type { FlowStepReason } from "../common/types.js";
import type { NewFlow, NewFlowStep } from "../contract/flows.js";
import type { NewJob } from "../contract/jobs.js";
import type { Settlement } from "../contract/runs.js";
import {
  admitStep,
  dependentEffect,
  dependentReason,
  flowStateOf,
  type ParentEvent,
  type StoredFlow,
  type StoredStep,
} from "./rules.js";

/** The rows a flow program reads and writes. Each backend implements it over its own transaction. */
export interface FlowStore {
  /** The flow row, locked for the rest of the transaction; null when missing. */
  flow(id: string): StoredFlow | null;
  /**
   * These steps of the flow (locked where the storage locks rows); missing refs are left out. The engine
   * never reads a loaded step's `dependsOn` (a fan-in's can hold 10,000 refs), so a store may leave it empty.
   */
  steps(flowId: string, refs: readonly string[]): StoredStep[];
  /** Every step of the flow, in creation order. */
  allSteps(flowId: string): StoredStep[];
  insertFlow(flow: StoredFlow): void;
  /**
   * Writes the flow's state, counters and finished_at; a flow reopened (finished_at null: a step's dead
   * letter replayed) gets its `notified_at` cleared, so its next finish fires `flow.finished` again.
   */
  saveFlow(flow: StoredFlow): void;
  insertSteps(flowId: string, steps: readonly StoredStep[]): void;
  /**
   * Writes each step's job_id, job_ids, job, dependents, state, pending_parents, reason and finished_at
   * (never `dependsOn`: it does not change after the insert).
   */
  saveSteps(flowId: string, steps: readonly StoredStep[]): void;
  /**
   * Writes each step's state, pending_parents, reason and finished_at only: steps whose job, job history and
   * dependents did not change (a step closed, released, held, or counting down its parents: every step a
   * settle touches). Through `saveSteps`, a 10,000-step fan-in's settles wrote every closed step's job again
   * with its state.
   */
  saveStepStates(flowId: string, steps: readonly StoredStep[]): void;
  /** Inserts released steps' jobs (no dedup: a step's job is never deduplicated). */
  insertJobs(jobs: readonly NewJob[]): void;
  /** Cancels these jobs where still queued or processing; returns the ids it cancelled. */
  cancelJobs(ids: readonly string[]): string[];
}

/** The same store with every method asynchronous (Postgres). */
export type AsyncFlowStore = {
  [K in keyof FlowStore]: (...args: Parameters<FlowStore[K]>) => Promise<ReturnType<FlowStore[K]>>;
};

type Call = { [K in keyof FlowStore]: { op: K; args: Parameters<FlowStore[K]> } }[keyof FlowStore];
/** A flow program: yields store calls, returns `T`. */
export type FlowProgram<T> = Generator<Call, T, unknown>;

function* call<K extends keyof FlowStore>(
  op: K,
  ...args: Parameters<FlowStore[K]>
): Generator<Call, ReturnType<FlowStore[K]>, unknown> {
  return (yield { op, args } as Call) as ReturnType<FlowStore[K]>;
}

/** Runs a program over a synchronous store (inside the caller's synchronous transaction). */
export function runFlowSync<T>(program: FlowProgram<T>, store: FlowStore): T {
  return runSync(program as unknown as Program<FlowStore, T>, store);
}

/** Runs a program over an asynchronous store (inside the caller's transaction). */
export function runFlowAsync<T>(program: FlowProgram<T>, store: AsyncFlowStore): Promise<T> {
  return runAsync(program as unknown as Program<FlowStore, T>, store as unknown as AsyncStore<FlowStore>);
}

/** The rows one program changed, written once at its end. */
class Changes {
  readonly steps = new Map<string, StoredStep>();
  readonly changed = new Set<string>();
  /** Changed steps whose job, job history or dependents changed too (the rest save their state only). */
  readonly reshaped = new Set<string>();
  readonly inserted = new Set<string>();
  readonly jobs: NewJob[] = [];

  constructor(
    readonly flow: StoredFlow,
    readonly now: Date,
  ) {}

  keep(steps: readonly StoredStep[]): void {
    for (const step of steps) if (!this.steps.has(step.ref)) this.steps.set(step.ref, step);
  }

  touch(step: StoredStep): void {
    if (!this.inserted.has(step.ref)) this.changed.add(step.ref);
  }

  /** `touch`, for a change to the step's job, job history or dependents. */
  reshape(step: StoredStep): void {
    if (this.inserted.has(step.ref)) return;
    this.changed.add(step.ref);
    this.reshaped.add(step.ref);
  }

  release(step: StoredStep): void {
    if (step.state === "held") this.flow.stepsHeld--;
    step.state = "queued";
    step.reason = null;
    this.jobs.push(step.job);
    this.touch(step);
  }

  close(
    step: StoredStep,
    state: "done" | "dead_lettered" | "cancelled",
    reason: FlowStepReason | null,
  ): void {
    if (step.state === "held") this.flow.stepsHeld--;
    step.state = state;
    step.reason = reason;
    step.finishedAt = this.now;
    this.flow.stepsOpen--;
    if (state !== "done") this.flow.stepsFailed++;
    this.touch(step);
  }
}

function* loadSteps(changes: Changes, flowId: string, refs: readonly string[]): FlowProgram<StoredStep[]> {
  const missing = refs.filter((ref) => !changes.steps.has(ref));
  if (missing.length > 0) changes.keep(yield* call("steps", flowId, missing));
  return refs.flatMap((ref) => changes.steps.get(ref) ?? []);
}

function* commit(changes: Changes): FlowProgram<void> {
  const { flow } = changes;
  const all = [...changes.steps.values()];
  const inserted = all.filter((s) => changes.inserted.has(s.ref));
  const changed = all.filter((s) => changes.changed.has(s.ref));
  const reshaped = changed.filter((s) => changes.reshaped.has(s.ref));
  const states = changed.filter((s) => !changes.reshaped.has(s.ref));
  if (inserted.length > 0) yield* call("insertSteps", flow.id, inserted);
  if (reshaped.length > 0) yield* call("saveSteps", flow.id, reshaped);
  if (states.length > 0) yield* call("saveStepStates", flow.id, states);
  if (changes.jobs.length > 0) yield* call("insertJobs", changes.jobs);
  const state = flowStateOf(flow);
  flow.finishedAt = state === "running" || state === "held" ? null : (flow.finishedAt ?? changes.now);
  flow.state = state;
  yield* call("saveFlow", flow);
}

/** What a parent's event does to its dependents, and on down through the steps that event cancels. */
function* propagate(
  changes: Changes,
  parent: StoredStep,
  event: ParentEvent,
  first: boolean,
): FlowProgram<void> {
  const work: [StoredStep, ParentEvent, boolean][] = [[parent, event, first]];
  for (let item = work.shift(); item !== undefined; item = work.shift()) {
    const [from, ev, isFirst] = item;
    for (const dep of yield* loadSteps(changes, changes.flow.id, from.dependents)) {
      if (dep.state !== "waiting" && dep.state !== "held") continue;
      const effect = dependentEffect(dep.onParentFailure, ev, isFirst);
      if (effect === "settle") {
        dep.pendingParents--;
        if (dep.pendingParents <= 0) changes.release(dep);
        else changes.touch(dep);
      } else if (effect === "hold" && dep.state === "waiting") {
        dep.state = "held";
        dep.reason = dependentReason(ev);
        changes.flow.stepsHeld++;
        changes.touch(dep);
      } else if (effect === "cancel") {
        changes.close(dep, "cancelled", dependentReason(ev));
        work.push([dep, "cancelled", true]);
      }
    }
  }
}

function newStoredStep(step: NewFlowStep, now: Date): StoredStep {
  return {
    ref: step.ref,
    jobId: step.job.id,
    jobIds: [step.job.id],
    jobName: step.job.jobName,
    job: step.job,
    dependsOn: [...step.dependsOn],
    dependents: [],
    onParentFailure: step.onParentFailure,
    state: "waiting",
    pendingParents: 0,
    reason: null,
    addedBy: step.addedBy,
    createdAt: now,
    finishedAt: null,
  };
}

/**
 * Adds steps to the flow (`steps` in an order where parents come first, as core's validation sorts
 * them). A step may depend on new steps and on existing ones; each starts in the state its parents'
 * states give it (`admitStep`). A ref that already exists is skipped (the first writer keeps it).
 */
function* admit(changes: Changes, steps: readonly NewFlowStep[]): FlowProgram<void> {
  const { flow } = changes;
  const taken = new Set(
    (yield* call(
      "steps",
      flow.id,
      steps.map((s) => s.ref),
    )).map((s) => s.ref),
  );
  const fresh = steps.filter((s) => !taken.has(s.ref) && !changes.steps.has(s.ref));
  const newRefs = new Set(fresh.map((s) => s.ref));
  const outside = [...new Set(fresh.flatMap((s) => s.dependsOn))].filter((r) => !newRefs.has(r));
  yield* loadSteps(changes, flow.id, outside);
  for (const input of fresh) {
    const step = newStoredStep(input, changes.now);
    const parents = step.dependsOn.flatMap((ref) => changes.steps.get(ref) ?? []);
    const start = admitStep(step.onParentFailure, parents);
    for (const parent of parents) {
      parent.dependents.push(step.ref);
      changes.reshape(parent);
    }
    step.pendingParents = start.pending;
    step.reason = start.reason;
    changes.steps.set(step.ref, step);
    changes.inserted.add(step.ref);
    flow.stepsTotal++;
    flow.stepsOpen++;
    if (start.state === "queued") changes.release(step);
    else if (start.state === "held") {
      step.state = "held";
      flow.stepsHeld++;
    } else if (start.state === "cancelled") changes.close(step, "cancelled", start.reason);
  }
}

/** Writes a new flow: its row, its steps, and the jobs of the steps without parents. */
export function* startFlow(flow: NewFlow, createdBy: string | null, now: Date): FlowProgram<void> {
  const row: StoredFlow = {
    id: flow.id,
    name: flow.name,
    state: "running",
    createdBy,
    stepsTotal: 0,
    stepsOpen: 0,
    stepsFailed: 0,
    stepsHeld: 0,
    createdAt: now,
    finishedAt: null,
  };
  yield* call("insertFlow", row);
  const changes = new Changes(row, now);
  yield* admit(changes, flow.steps);
  yield* commit(changes);
}

/** A step's job that finished, as `finishSteps` takes it. */
export interface FinishedStep {
  ref: string;
  jobId: string;
  event: "done" | "dead_lettered" | "cancelled";
  /** `ctx.flow.add`'s steps, written with a `done`. */
  add: readonly NewFlowStep[];
}

/**
 * Steps' jobs of one flow finished (`done`, `dead_lettered` or `cancelled`), in this order: each step
 * closes and its dependents follow (released, held or cancelled), with `add`'s steps written first on
 * `done`. A job that is not its step's current job (an old replay) or a step already closed changes
 * nothing. The finished steps and their dependents are read in two statements, whatever their number, and
 * every change is written once at the end: a batch of settlements costs a handful of statements per flow.
 */
export function* finishSteps(
  flowId: string,
  finished: readonly FinishedStep[],
  now: Date,
): FlowProgram<void> {
  const flow = yield* call("flow", flowId);
  if (flow === null) return;
  const changes = new Changes(flow, now);
  const steps = yield* loadSteps(changes, flowId, [...new Set(finished.map((f) => f.ref))]);
  yield* loadSteps(changes, flowId, [...new Set(steps.flatMap((s) => s.dependents))]);
  for (const f of finished) {
    const step = changes.steps.get(f.ref);
    if (step === undefined || step.jobId !== f.jobId || step.state !== "queued") continue;
    const first = step.jobIds.length === 1;
    if (f.event === "done" && f.add.length > 0 && flow.state !== "cancelled") yield* admit(changes, f.add);
    changes.close(step, f.event, f.event === "cancelled" ? "job_cancelled" : null);
    yield* propagate(changes, step, f.event, first);
  }
  yield* commit(changes);
}

/** One step's job finished: `finishSteps` with one item. */
export function finishStep(
  flowId: string,
  ref: string,
  jobId: string,
  event: FinishedStep["event"],
  add: readonly NewFlowStep[],
  now: Date,
): FlowProgram<void> {
  return finishSteps(flowId, [{ ref, jobId, event, add }], now);
}

/**
 * The flow side of a settle call: the applied `done` and `dead_letter` items of flow steps, grouped by flow
 * in flow id order (so two batches lock shared flow rows in the same order), each group in item order.
 */
export function settledSteps(
  items: readonly Settlement[],
  applied: readonly boolean[],
): { flowId: string; steps: FinishedStep[] }[] {
  if (!items.some((item) => item.kind !== "requeue" && item.flow !== undefined)) return [];
  const byFlow = new Map<string, FinishedStep[]>();
  items.forEach((item, i) => {
    if (!applied[i] || item.kind === "requeue" || item.flow === undefined) return;
    const event = item.kind === "done" ? "done" : "dead_lettered";
    const add = item.kind === "done" ? item.flow.add : [];
    const list = byFlow.get(item.flow.flowId) ?? [];
    list.push({ ref: item.flow.stepRef, jobId: item.id, event, add });
    byFlow.set(item.flow.flowId, list);
  });
  return [...byFlow.keys()].sort().map((flowId) => ({ flowId, steps: byFlow.get(flowId) ?? [] }));
}

/**
 * The flow side of a settle call as one program: every applied `done` and `dead_letter` item of a flow step,
 * each flow's steps finished together (`finishSteps`), flows in id order. Every backend runs it once per
 * settle call, inside the settle's transaction, after the call's own writes; null when the call ended no flow
 * step (the usual batch: nothing to run).
 */
export function settleFlows(
  items: readonly Settlement[],
  applied: readonly boolean[],
  now: () => Date,
): FlowProgram<void> | null {
  const flows = settledSteps(items, applied);
  if (flows.length === 0) return null;
  const at = now();
  return (function* () {
    for (const { flowId, steps } of flows) yield* finishSteps(flowId, steps, at);
  })();
}

/**
 * A step's dead letter was replayed as `newJobId`: the new job takes the step's place (the step is queued
 * again, the id appended to its history) unless the step moved on or the flow was cancelled. True when it
 * rejoined (the backend then inserts the job with the flow's id and the step's ref).
 */
export function* replayStep(
  flowId: string,
  ref: string,
  deadLetterId: string,
  newJobId: string,
  now: Date,
): FlowProgram<boolean> {
  const flow = yield* call("flow", flowId);
  if (flow === null || flow.state === "cancelled") return false;
  const changes = new Changes(flow, now);
  const [step] = yield* loadSteps(changes, flowId, [ref]);
  if (step === undefined || step.jobId !== deadLetterId || step.state !== "dead_lettered") return false;
  step.jobId = newJobId;
  step.jobIds = [...step.jobIds, newJobId];
  step.job = { ...step.job, id: newJobId };
  step.state = "queued";
  step.finishedAt = null;
  flow.stepsOpen++;
  flow.stepsFailed--;
  changes.reshape(step);
  yield* commit(changes);
  return true;
}

/** A step's dead letter was purged: the dependents it held are cancelled (`parent_purged`). */
export function* purgeStep(flowId: string, ref: string, deadLetterId: string, now: Date): FlowProgram<void> {
  const flow = yield* call("flow", flowId);
  if (flow === null) return;
  const changes = new Changes(flow, now);
  const [step] = yield* loadSteps(changes, flowId, [ref]);
  if (step === undefined || step.jobId !== deadLetterId || step.state !== "dead_lettered") return;
  yield* propagate(changes, step, "purged", true);
  yield* commit(changes);
}

/**
 * Cancels an open flow: waiting and held steps cancelled, the jobs of queued (and processing) steps
 * cancelled. Returns the job ids it cancelled, or null when the flow is missing or finished.
 */
export function* cancelFlow(flowId: string, now: Date): FlowProgram<string[] | null> {
  const flow = yield* call("flow", flowId);
  if (flow === null || flow.state === "succeeded" || flow.state === "failed" || flow.state === "cancelled") {
    return null;
  }
  const changes = new Changes(flow, now);
  const steps = yield* call("allSteps", flowId);
  changes.keep(steps);
  const jobIds: string[] = [];
  for (const step of steps) {
    if (step.state === "queued") jobIds.push(step.jobId);
    if (step.state === "waiting" || step.state === "held" || step.state === "queued") {
      changes.close(step, "cancelled", "flow_cancelled");
    }
  }
  flow.state = "cancelled";
  const cancelled = jobIds.length > 0 ? yield* call("cancelJobs", jobIds) : [];
  yield* commit(changes);
  return cancelled;
}
