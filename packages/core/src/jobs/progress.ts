/**
 * `ctx.progress(value)`: a handler's latest progress, kept in memory and written with the worker's next
 * heartbeat (worker/upkeep.ts), never once per call. A handler may report thousands of times a second; the
 * table sees at most one write per heartbeat interval for all of a worker's jobs together, plus one final
 * write when the worker stops. The value is checked at the call (JSON, at most `MAX_PROGRESS_BYTES`
 * serialized), so a bad value fails in the handler with a typed error and nothing is written.
 */
import { SoniqError } from "../common/errors.js";
import { checkJson } from "../common/json.js";

/** The largest progress value accepted, in bytes of its UTF-8 JSON text. */
export const MAX_PROGRESS_BYTES = 4096;

/**
 * The stored form of `value`: a number as is, anything else a deep copy (so a handler mutating its object
 * afterwards does not change what is written). Throws `SONIQ_INVALID_ARGUMENT` for a value that is not JSON
 * or is larger than `MAX_PROGRESS_BYTES`.
 */
export function checkProgress(value: unknown): unknown {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  const checked = checkJson(value);
  if (!checked.ok) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `ctx.progress(): ${checked.problem.path}: ${checked.problem.problem}. Report a number or a small JSON value.`,
      { context: { path: checked.problem.path } },
    );
  }
  const text = JSON.stringify(checked.value);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_PROGRESS_BYTES) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `ctx.progress(): the value is ${bytes} bytes as JSON, more than ${MAX_PROGRESS_BYTES}; report a number or a small summary (keep large data in the result).`,
      { context: { bytes, limit: MAX_PROGRESS_BYTES } },
    );
  }
  return JSON.parse(text) as unknown;
}

/** One run's latest value (the contract's `ProgressUpdate`; this file sits below the contract). */
export interface PendingProgress {
  id: string;
  attempt: number;
  value: unknown;
}

/** The latest unwritten progress of each run of one worker (the last call wins). */
export class ProgressBuffer {
  readonly #pending = new Map<string, PendingProgress>();

  get size(): number {
    return this.#pending.size;
  }

  set(id: string, attempt: number, value: unknown): void {
    this.#pending.set(id, { id, attempt, value });
  }

  /** Takes every pending value (the caller writes them, or puts them back with `restore`). */
  drain(): PendingProgress[] {
    const updates = [...this.#pending.values()];
    this.#pending.clear();
    return updates;
  }

  /** Puts back values whose write failed, unless a newer value arrived meanwhile. */
  restore(updates: readonly PendingProgress[]): void {
    for (const update of updates) {
      if (!this.#pending.has(update.id)) this.#pending.set(update.id, update);
    }
  }
}
