/**
 * One error model for every package: `SoniqError` with a stable `code`.
 * Recognise errors with `isSoniqError(err, code)`, not `instanceof`, so two copies of core agree.
 */

export const SONIQ_ERROR_CODES = [
  /** A job name does not match the dotted-lowercase pattern. */
  "SONIQ_INVALID_TASK_NAME",
  /** Enqueue or replay by name for a job this instance does not know (strict mode). */
  "SONIQ_UNKNOWN_TASK_NAME",
  /** Args fail the job's schema, or are not JSON. */
  "SONIQ_TASK_ARGS_INVALID",
  /** A write would give a job an illegal status (`dead_letter`, or a terminal state changing). */
  "SONIQ_INVALID_STATUS_TRANSITION",
  /** The dead-letter table already holds a row with this job's id; nothing was moved. */
  "SONIQ_DEAD_LETTER_CONFLICT",
  /** An options object failed validation; `context.problems` lists every problem. */
  "SONIQ_INVALID_OPTIONS",
  /** An argument to an API call is out of range or of the wrong shape. */
  "SONIQ_INVALID_ARGUMENT",
  /** A queue control (pause, resume, configure) named a queue nothing knows, without `{ create: true }`. */
  "SONIQ_UNKNOWN_QUEUE",
  /** `tx` was passed to a backend that cannot enqueue inside a caller's transaction, or is not a usable handle. */
  "SONIQ_TRANSACTION_UNSUPPORTED",
  /** A call reached a backend or app after `close()`. */
  "SONIQ_CLOSED",
  /** Applying migrations failed. */
  "SONIQ_MIGRATION_FAILED",
  /** The database refused a write for a reason Soniq did not translate more precisely; see `cause`. */
  "SONIQ_BACKEND_ERROR",
  /** A handler ran longer than its `timeoutMs` (its `ctx.signal.reason`, a `JobAbortedError`). */
  "SONIQ_JOB_TIMEOUT",
  /** A running handler's signal was aborted: the job was cancelled, lost to recovery, or the worker shut down. */
  "SONIQ_JOB_ABORTED",
  /** An operation is not allowed in the object's current state (e.g. starting a worker twice). */
  "SONIQ_INVALID_STATE",
  /** `flows.start` or `ctx.flow.add` refused the steps (`context.field`, `context.ref`); nothing was written. */
  "SONIQ_INVALID_FLOW",
  /** A wait (`waitFor()`, `handle.result()`, `flows.waitFor`) ran out of time before the outcome it waited for. */
  "SONIQ_TIMEOUT",
  /** `waitFor()` named a job that is in neither `soniq_jobs` nor `soniq_dead_letter_jobs`. */
  "SONIQ_JOB_NOT_FOUND",
  /**
   * A webhook URL resolves to a loopback, private or reserved address (allow with `allowPrivateNetworks`), or
   * names a port outside `webhooks.allowedPorts`.
   */
  "SONIQ_WEBHOOK_TARGET_REFUSED",
  /**
   * The app asked for a feature its backend does not declare (`context.capability`: `flows`, `webhooks`,
   * `schedules`, `queues`, `audit`, `metrics`, `progress` or `steps`); nothing was written.
   */
  "SONIQ_UNSUPPORTED",
  /**
   * A durable step's write found the run no longer holds the job (cancelled, recovered as stale, or claimed
   * again): nothing was stored (`ctx.step`, `ctx.sleep`, `ctx.waitForSignal`, `ctx.complete`).
   */
  "SONIQ_LEASE_LOST",
  /** `jobs.signal` named a job that is `done` or `cancelled`; nothing was stored. */
  "SONIQ_JOB_FINISHED",
] as const;

export type SoniqErrorCode = (typeof SONIQ_ERROR_CODES)[number];

const BRAND = Symbol.for("soniq.error");

export interface SoniqErrorOptions {
  context?: Record<string, unknown>;
  cause?: unknown;
}

export class SoniqError extends Error {
  readonly code: SoniqErrorCode;
  readonly context: Readonly<Record<string, unknown>>;
  readonly [BRAND] = true;

  constructor(code: SoniqErrorCode, message: string, options: SoniqErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SoniqError";
    this.code = code;
    this.context = Object.freeze({ ...(options.context ?? {}) });
  }
}

/** True when `err` is a SoniqError (from any copy of core), optionally with the given code. */
export function isSoniqError(err: unknown, code?: SoniqErrorCode): err is SoniqError {
  if (typeof err !== "object" || err === null || (err as Record<symbol, unknown>)[BRAND] !== true)
    return false;
  return code === undefined || (err as SoniqError).code === code;
}

/** Why a worker aborted a running job's `ctx.signal`. */
export type JobAbortReason = "timeout" | "cancelled" | "shutdown" | "lost";

/**
 * The `ctx.signal.reason` of an aborted job: a `SoniqError` with code `SONIQ_JOB_TIMEOUT` (the handler
 * ran past its `timeoutMs`) or `SONIQ_JOB_ABORTED` (cancelled, lost to stale recovery, or shut down);
 * `why` says which.
 */
export class JobAbortedError extends SoniqError {
  constructor(
    readonly why: JobAbortReason,
    message: string,
  ) {
    super(why === "timeout" ? "SONIQ_JOB_TIMEOUT" : "SONIQ_JOB_ABORTED", message, { context: { why } });
    this.name = "JobAbortedError";
  }
}
