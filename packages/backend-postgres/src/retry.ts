/**
 * The worker's other outcomes, each one fenced statement (one round trip): retry after a failure, nack
 * (give the job back untouched), reschedule (snooze without spending an attempt).
 */
import type { JobRef, RescheduleOptions, RetryOptions } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";

const FENCE = "id = $1 AND status = 'processing' AND attempts = $2";

const RETRY = `UPDATE soniq_jobs
SET status = 'queued', last_error = $3, scheduled_at = now() + $4 * interval '1 millisecond', updated_at = now()
WHERE ${FENCE}`;

const NACK = `UPDATE soniq_jobs
SET status = 'queued', worker_id = NULL, scheduled_at = now(), updated_at = now()
WHERE ${FENCE}`;

const RESCHEDULE = `UPDATE soniq_jobs
SET status = 'queued', attempts = attempts - 1, last_error = $3,
    scheduled_at = now() + $4 * interval '1 millisecond', updated_at = now()
WHERE ${FENCE}`;

function checkRef(operation: string, ref: JobRef, delayMs = 0): boolean {
  if (!Number.isSafeInteger(ref.attempt) || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `${operation}(): attempt must be an integer and delayMs a finite number >= 0.`,
      { context: { id: ref.id, attempt: ref.attempt, delayMs } },
    );
  }
  return isUuid(ref.id);
}

export async function retry(ctx: PgContext, ref: JobRef, options: RetryOptions): Promise<boolean> {
  if (!checkRef("retry", ref, options.delayMs)) return false;
  const res = await query(ctx, "retry", {
    name: "soniq_retry",
    text: RETRY,
    values: [ref.id, ref.attempt, options.error, options.delayMs],
  });
  return res.rowCount === 1;
}

export async function nack(ctx: PgContext, ref: JobRef): Promise<boolean> {
  if (!checkRef("nack", ref)) return false;
  const res = await query(ctx, "nack", { name: "soniq_nack", text: NACK, values: [ref.id, ref.attempt] });
  return res.rowCount === 1;
}

export async function reschedule(ctx: PgContext, ref: JobRef, options: RescheduleOptions): Promise<boolean> {
  if (!checkRef("reschedule", ref, options.delayMs)) return false;
  const reason = options.reason ? `SNOOZE: ${options.reason}` : "SNOOZE";
  const res = await query(ctx, "reschedule", {
    name: "soniq_reschedule",
    text: RESCHEDULE,
    values: [ref.id, ref.attempt, reason, options.delayMs],
  });
  return res.rowCount === 1;
}
