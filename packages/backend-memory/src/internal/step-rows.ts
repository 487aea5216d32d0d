/**
 * `soniq_job_steps` and `soniq_job_signals` in memory (DESIGN.md section 19): the records, their public copies,
 * and the writes that more than one facet makes (a checkpoint's upsert, a replay's move, the rows' deletion).
 * Values and payloads are stored as JSON text, like every other stored value (rows.ts).
 */
import type { JobStep, ReplaySteps, StepKind, StepState } from "@soniq/core/backend";
import { decodeJson, encodeJson } from "./rows.js";
import type { MemoryStore } from "./store.js";

/** One checkpoint (a `soniq_job_steps` row), keyed by (job id, name). */
export interface StepRecord {
  readonly name: string;
  /** First-write order within the job; kept when the checkpoint is replaced. */
  readonly seq: number;
  readonly kind: StepKind;
  readonly state: StepState;
  readonly valueJson: string | null;
  readonly error: string | null;
  readonly attempt: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
  readonly wakeAt: number | null;
}

/** A job's checkpoints by name (in `seq` order), and the last `seq` it handed out. */
export interface JobStepsRecord {
  readonly byName: Map<string, StepRecord>;
  lastSeq: number;
}

/** One `soniq_job_signals` row. */
export interface SignalRecord {
  readonly id: string;
  readonly name: string;
  readonly payloadJson: string | null;
  readonly key: string | null;
  readonly createdAt: number;
  consumedAt: number | null;
  consumedBy: string | null;
}

/** A job's mailbox: its signals in insertion (created_at) order, and the unique (job id, key) index. */
export interface SignalBox {
  signals: SignalRecord[];
  readonly keys: Set<string>;
}

/** A checkpoint's fields as written; `seq` is the store's. */
export type StepFields = Omit<StepRecord, "seq">;

/** Encode a checkpoint for storage (`undefined` and `null` stay null, as a SQL NULL). */
export function stepFields(jobId: string, step: JobStep): StepFields {
  return {
    name: step.name,
    kind: step.kind,
    state: step.state,
    valueJson: encodeValue(step.value, `step value (job ${jobId}, ${step.name})`),
    error: step.error,
    attempt: step.attempt,
    startedAt: step.startedAt?.getTime() ?? null,
    finishedAt: step.finishedAt?.getTime() ?? null,
    wakeAt: step.wakeAt?.getTime() ?? null,
  };
}

export function encodeValue(value: unknown, field: string): string | null {
  return value === null || value === undefined ? null : encodeJson(value, field);
}

/** Insert or replace a checkpoint: a new one takes the job's next `seq`, a replaced one keeps its own. */
export function putStep(store: MemoryStore, jobId: string, fields: StepFields): void {
  let steps = store.jobSteps.get(jobId);
  if (steps === undefined) {
    steps = { byName: new Map(), lastSeq: 0 };
    store.jobSteps.set(jobId, steps);
  }
  const seq = steps.byName.get(fields.name)?.seq ?? ++steps.lastSeq;
  steps.byName.set(fields.name, { ...fields, seq });
}

/** The job's checkpoint of that name, as a fresh copy; null when none. */
export function readStep(store: MemoryStore, jobId: string, name: string): JobStep | null {
  const record = store.jobSteps.get(jobId)?.byName.get(name);
  return record === undefined ? null : toJobStep(record);
}

/** A job's (or a dead letter's) checkpoints in `seq` order, as fresh copies. */
export function listSteps(store: MemoryStore, jobId: string): JobStep[] {
  const steps = store.jobSteps.get(jobId);
  if (steps === undefined) return [];
  return [...steps.byName.values()].sort((a, b) => a.seq - b.seq).map(toJobStep);
}

export function toJobStep(r: StepRecord): JobStep {
  return {
    name: r.name,
    kind: r.kind,
    state: r.state,
    value: decodeJson(r.valueJson),
    error: r.error,
    attempt: r.attempt,
    startedAt: r.startedAt === null ? null : new Date(r.startedAt),
    finishedAt: r.finishedAt === null ? null : new Date(r.finishedAt),
    wakeAt: r.wakeAt === null ? null : new Date(r.wakeAt),
  };
}

/** Delete a job's (or a dead letter's) checkpoints and signals: its row is gone for good. */
export function deleteSteps(store: MemoryStore, jobId: string): void {
  store.jobSteps.delete(jobId);
  store.jobSignals.delete(jobId);
}

/** `ReplaySteps` with its `resolve` values encoded, before a replay writes anything. */
export interface EncodedReplaySteps {
  keep: boolean;
  resolve: { name: string; valueJson: string | null }[];
}

/** Absent: keep, resolve nothing (`ReplayRequest.steps`). */
export function encodeReplaySteps(steps: ReplaySteps | undefined): EncodedReplaySteps {
  if (steps === undefined) return { keep: true, resolve: [] };
  return {
    keep: steps.keep,
    resolve: steps.resolve.map(({ name, value }) => ({
      name,
      valueJson: encodeValue(value, `resolved step value (${name})`),
    })),
  };
}

/**
 * A replay's checkpoints and signals, in the replay's synchronous step: the dead letter's `done` checkpoints
 * move to the new job when `keep` (their `seq` kept), the resolved ones are recorded `done` (attempt 0, replacing
 * a kept one), and the unconsumed signals always move (consumed ones stay with the dead letter).
 */
export function moveForReplay(
  store: MemoryStore,
  fromId: string,
  toId: string,
  steps: EncodedReplaySteps,
  now: number,
): void {
  const from = store.jobSteps.get(fromId);
  if (steps.keep && from !== undefined) {
    const moved: StepRecord[] = [];
    for (const record of from.byName.values()) if (record.state === "done") moved.push(record);
    if (moved.length > 0) {
      const target: JobStepsRecord = { byName: new Map(), lastSeq: 0 };
      for (const record of moved) {
        from.byName.delete(record.name);
        target.byName.set(record.name, record);
        target.lastSeq = Math.max(target.lastSeq, record.seq);
      }
      store.jobSteps.set(toId, target);
      if (from.byName.size === 0) store.jobSteps.delete(fromId);
    }
  }
  for (const { name, valueJson } of steps.resolve) {
    putStep(store, toId, {
      name,
      kind: "step",
      state: "done",
      valueJson,
      error: null,
      attempt: 0,
      startedAt: now,
      finishedAt: now,
      wakeAt: null,
    });
  }
  moveSignals(store, fromId, toId);
}

function moveSignals(store: MemoryStore, fromId: string, toId: string): void {
  const from = store.jobSignals.get(fromId);
  if (from === undefined) return;
  const moving = from.signals.filter((s) => s.consumedAt === null);
  if (moving.length === 0) return;
  const target = signalBox(store, toId);
  for (const signal of moving) {
    target.signals.push(signal);
    if (signal.key !== null) {
      target.keys.add(signal.key);
      from.keys.delete(signal.key);
    }
  }
  from.signals = from.signals.filter((s) => s.consumedAt !== null);
  if (from.signals.length === 0) store.jobSignals.delete(fromId);
}

/** The job's mailbox, created empty on first use. */
export function signalBox(store: MemoryStore, jobId: string): SignalBox {
  let box = store.jobSignals.get(jobId);
  if (box === undefined) {
    box = { signals: [], keys: new Set() };
    store.jobSignals.set(jobId, box);
  }
  return box;
}
