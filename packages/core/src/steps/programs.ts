/**
 * The durable-step rules that decide something, written once as programs (common/program.ts) that every
 * backend's `steps.wait` and `steps.signal` run over a small store of its own, inside its own transaction:
 *
 * A wait (`ctx.sleep`, `ctx.sleepUntil`, `ctx.waitForSignal`), under the fence (the job's row held, locked
 * against a concurrent signal):
 * - a checkpoint already `done` answers its value, one `timed_out` answers `timed_out` (a later attempt never
 *   waits again);
 * - a signal wait consumes the oldest unconsumed signal of its name, if any, and records it `done` with the
 *   signal's payload, whatever its deadline (a signal that arrived in time is never lost to a slow worker);
 * - the wake time is the stored one, else the backend's now plus the delay (or `sleepUntil`'s instant): a
 *   replayed attempt never stretches a sleep or a deadline;
 * - a wake time reached: `done` (sleep) or `timed_out` (signal wait);
 * - else the checkpoint is `waiting` with that wake time, and when it is at least `inProcessMs` away the job
 *   goes back to `queued`, due then, its attempt given back (a sleep spends no attempt) and its worker cleared.
 *
 * A signal (`jobs.signal`), under the job's row lock: to no row, `not_found`; to a done or cancelled job,
 * `finished`; else stored unless its key was seen (`duplicate`), and a queued job waiting on that name is made
 * due now and woken; the audit row rides along when stored. A dead letter's signal is stored for its replay.
 */

import { type AsyncStore, type Program, runAsync, runSync, storeCall } from "../common/program.js";
import type { JobStatus, JobStep } from "../common/types.js";
import type {
  AuditRecord,
  SignalRequest,
  SignalResult,
  StepRef,
  WaitRequest,
  WaitResult,
} from "../contract/index.js";

/** The separator of an occurrence suffix (`charge#2`); never part of a step name. */
export const OCCURRENCE_SEPARATOR = "#";

/** The signal name a wait's occurrence name consumes (`approval#2` -> `approval`). */
export function occurrenceBase(name: string): string {
  const at = name.indexOf(OCCURRENCE_SEPARATOR);
  return at < 0 ? name : name.slice(0, at);
}

/** The storage a wait runs over, inside one transaction of the backend's. */
export interface WaitStore {
  /**
   * Locks the job's row when the fence holds (processing, `ref.attempt`, `ref.workerId` when set) and answers
   * the backend's now; null when it does not (nothing is written then).
   */
  hold(ref: StepRef): Date | null;
  /** The job's checkpoint of that name, if any. */
  readStep(jobId: string, name: string): JobStep | null;
  /** Inserts or replaces the checkpoint (a new one is ordered after the job's others). */
  writeStep(jobId: string, step: JobStep): void;
  /** Marks the oldest unconsumed signal of that name consumed (`consumed_by` = `consumedBy`); its payload. */
  takeSignal(jobId: string, signal: string, consumedBy: string, now: Date): { payload: unknown } | null;
  /** The job back to `queued`, due at `wakeAt`, `attempts` = `attempts`, its worker cleared. */
  suspend(jobId: string, wakeAt: Date, attempts: number): void;
}

/** The storage a signal runs over, inside one transaction of the backend's. */
export interface SignalStore {
  /** Locks the job's row and answers its status; `dead_letter` when only a dead letter has the id; null: none. */
  lockTarget(jobId: string): JobStatus | "dead_letter" | null;
  /** Inserts the signal; false when one with the same (job, key) exists (nothing written). */
  insertSignal(request: SignalRequest): boolean;
  /** Whether the job has a `waiting` signal checkpoint whose name is `signal` or `signal#n`. */
  waitingFor(jobId: string, signal: string): boolean;
  /** The queued job due now, and a wake-up sent when the transaction commits. */
  wake(jobId: string): void;
  /** Writes the audit row. */
  audit(record: AuditRecord): void;
}

const call = storeCall;

export function* waitProgram(
  ref: StepRef,
  request: WaitRequest,
  inProcessMs: number,
): Program<WaitStore, WaitResult> {
  const now = yield* call<WaitStore, "hold">("hold", ref);
  if (now === null) return { state: "lost" };
  const existing = yield* call<WaitStore, "readStep">("readStep", ref.id, request.name);
  if (existing?.state === "done") return { state: "done", value: existing.value };
  if (existing?.state === "timed_out") return { state: "timed_out" };
  const startedAt = existing?.startedAt ?? now;
  const checkpoint = (state: JobStep["state"], value: unknown, wakeAt: Date | null): JobStep => ({
    name: request.name,
    kind: request.kind,
    state,
    value,
    error: null,
    attempt: ref.attempt,
    startedAt,
    finishedAt: state === "waiting" ? null : now,
    wakeAt,
  });
  if (request.kind === "signal") {
    const taken = yield* call<WaitStore, "takeSignal">(
      "takeSignal",
      ref.id,
      request.signal,
      request.name,
      now,
    );
    if (taken !== null) {
      yield* call<WaitStore, "writeStep">(
        "writeStep",
        ref.id,
        checkpoint("done", taken.payload, existing?.wakeAt ?? null),
      );
      return { state: "done", value: taken.payload };
    }
  }
  const wakeAt =
    existing?.wakeAt ??
    (request.kind === "sleep"
      ? (request.wakeAt ?? new Date(now.getTime() + request.delayMs))
      : new Date(now.getTime() + request.timeoutMs));
  const remainingMs = wakeAt.getTime() - now.getTime();
  if (remainingMs <= 0) {
    const state = request.kind === "sleep" ? "done" : "timed_out";
    yield* call<WaitStore, "writeStep">("writeStep", ref.id, checkpoint(state, null, wakeAt));
    return state === "done" ? { state: "done", value: null } : { state: "timed_out" };
  }
  if (existing?.state !== "waiting" || existing.attempt !== ref.attempt) {
    yield* call<WaitStore, "writeStep">("writeStep", ref.id, checkpoint("waiting", null, wakeAt));
  }
  if (remainingMs < inProcessMs) return { state: "waiting", wakeAt, remainingMs, suspended: false };
  yield* call<WaitStore, "suspend">("suspend", ref.id, wakeAt, Math.max(0, ref.attempt - 1));
  return { state: "waiting", wakeAt, remainingMs, suspended: true };
}

export function* signalProgram(
  request: SignalRequest,
  audit?: AuditRecord,
): Program<SignalStore, SignalResult> {
  const target = yield* call<SignalStore, "lockTarget">("lockTarget", request.jobId);
  if (target === null) return { outcome: "not_found" };
  if (target === "done" || target === "cancelled") return { outcome: "finished", status: target };
  const stored = yield* call<SignalStore, "insertSignal">("insertSignal", request);
  if (!stored) return { outcome: "duplicate" };
  let woke = false;
  if (
    target === "queued" &&
    (yield* call<SignalStore, "waitingFor">("waitingFor", request.jobId, request.name))
  ) {
    yield* call<SignalStore, "wake">("wake", request.jobId);
    woke = true;
  }
  if (audit !== undefined) yield* call<SignalStore, "audit">("audit", audit);
  return { outcome: "stored", woke, deadLetter: target === "dead_letter" };
}

/** `steps.wait` over a synchronous store (SQLite and memory, inside their transaction). */
export function runWaitSync(
  store: WaitStore,
  ref: StepRef,
  request: WaitRequest,
  inProcessMs: number,
): WaitResult {
  return runSync(waitProgram(ref, request, inProcessMs), store);
}

/** `steps.wait` over an asynchronous store (Postgres, inside its transaction). */
export function runWaitAsync(
  store: AsyncStore<WaitStore>,
  ref: StepRef,
  request: WaitRequest,
  inProcessMs: number,
): Promise<WaitResult> {
  return runAsync(waitProgram(ref, request, inProcessMs), store);
}

/** `steps.signal` over a synchronous store. */
export function runSignalSync(store: SignalStore, request: SignalRequest, audit?: AuditRecord): SignalResult {
  return runSync(signalProgram(request, audit), store);
}

/** `steps.signal` over an asynchronous store. */
export function runSignalAsync(
  store: AsyncStore<SignalStore>,
  request: SignalRequest,
  audit?: AuditRecord,
): Promise<SignalResult> {
  return runAsync(signalProgram(request, audit), store);
}
