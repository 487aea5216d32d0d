/**
 * The dashboard's HTTP error: a stable `code`, the status it answers with, and a message that says
 * what to do. Every refusal of bad input is one of these (4xx); anything else is a real 500.
 */
import { isSoniqError } from "@soniq/core";
import { type Redactor, shownRefusal } from "@soniq/core/ops";

export const DASHBOARD_ERROR_CODES = [
  "bad_request",
  "unauthorized",
  "forbidden",
  "writes_disabled",
  "csrf",
  "not_found",
  "conflict",
  "payload_too_large",
  "host_not_allowed",
  "rate_limited",
  "internal",
] as const;

export type DashboardErrorCode = (typeof DASHBOARD_ERROR_CODES)[number];

type Status = 400 | 401 | 403 | 404 | 409 | 413 | 421 | 429 | 500;

const STATUS: Record<DashboardErrorCode, Status> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  writes_disabled: 403,
  csrf: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  host_not_allowed: 421,
  rate_limited: 429,
  internal: 500,
};

export class DashboardError extends Error {
  readonly code: DashboardErrorCode;
  readonly status: Status;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: DashboardErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "DashboardError";
    this.code = code;
    this.status = STATUS[code];
    this.details = details;
  }
}

export function badRequest(message: string, details?: Record<string, unknown>): DashboardError {
  return new DashboardError("bad_request", message, details);
}

export function notFound(message: string): DashboardError {
  return new DashboardError("not_found", message);
}

/**
 * Maps a thrown value to the error the client sees; core's input errors stay 4xx and carry core's code as
 * `soniqCode` (e.g. a signal to a finished job: 409 `conflict` with `soniqCode: "SONIQ_JOB_FINISHED"`; a replay
 * whose args the job's schema refuses: 400 with `soniqCode: "SONIQ_TASK_ARGS_INVALID"`). The message is core's
 * as the app's `redact` lets a viewer see it (`shownRefusal`: a validator's messages, which may quote the refused
 * value, are withheld while a rule is active).
 */
export function toDashboardError(thrown: unknown, redact: Redactor): DashboardError {
  if (thrown instanceof DashboardError) return thrown;
  const err = shownRefusal(redact, thrown);
  if (
    isSoniqError(err, "SONIQ_INVALID_ARGUMENT") ||
    isSoniqError(err, "SONIQ_INVALID_OPTIONS") ||
    isSoniqError(err, "SONIQ_TASK_ARGS_INVALID")
  ) {
    return badRequest(err.message, { soniqCode: err.code });
  }
  if (isSoniqError(err, "SONIQ_UNKNOWN_QUEUE") || isSoniqError(err, "SONIQ_JOB_NOT_FOUND")) {
    return new DashboardError("not_found", err.message, { soniqCode: err.code });
  }
  if (
    isSoniqError(err, "SONIQ_UNKNOWN_TASK_NAME") ||
    isSoniqError(err, "SONIQ_INVALID_STATUS_TRANSITION") ||
    isSoniqError(err, "SONIQ_INVALID_STATE") ||
    isSoniqError(err, "SONIQ_JOB_FINISHED")
  ) {
    return new DashboardError("conflict", err.message, { soniqCode: err.code });
  }
  return new DashboardError("internal", "The dashboard failed to answer; see the server log.");
}

export function errorBody(err: DashboardError): { error: Record<string, unknown> } {
  return { error: { code: err.code, message: err.message, ...(err.details ?? {}) } };
}
