/**
 * A claimed job goes back to the queue: retry (an attempt failed), nack (given back, optionally refunding the claim's attempt) and
 * reschedule (snooze, without spending the attempt). All fenced by the JobRef like every worker write.
 * A requeued job gives up a dedup_key or unique args that another queued job took meanwhile. Retry keeps
 * worker_id (who ran the failed attempt); nack, reschedule and recovery clear it.
 */
import type { JobRef, NackOptions, RescheduleOptions, RetryOptions } from "@soniq/core";
import type { SqliteContext } from "./context.js";
import { invalidArgument } from "./errors.js";
import { NOW, RELEASE_TAKEN_KEYS } from "./sql.js";

const FENCE = "id = @id AND status = 'processing' AND attempts = @attempt";

const RETRY = `UPDATE soniq_jobs
  SET status = 'queued', last_error = @error, scheduled_at = ${NOW} + @delayMs,
    updated_at = ${NOW}, ${RELEASE_TAKEN_KEYS}
  WHERE ${FENCE} RETURNING queue`;

const NACK = `UPDATE soniq_jobs
  SET status = 'queued', attempts = MAX(attempts - @refund, 0), scheduled_at = ${NOW}, worker_id = NULL,
    updated_at = ${NOW}, ${RELEASE_TAKEN_KEYS}
  WHERE ${FENCE} RETURNING queue`;

const RESCHEDULE = `UPDATE soniq_jobs
  SET status = 'queued', attempts = MAX(attempts - 1, 0), last_error = @reason,
    scheduled_at = ${NOW} + @delayMs, worker_id = NULL, updated_at = ${NOW}, ${RELEASE_TAKEN_KEYS}
  WHERE ${FENCE} RETURNING queue`;

function checkRef(ref: JobRef, operation: string): void {
  if (typeof ref?.id !== "string" || !Number.isInteger(ref.attempt)) {
    throw invalidArgument(`${operation} needs { id: string, attempt: integer }.`, { operation });
  }
}

function checkDelay(delayMs: number, operation: string, id: string): number {
  if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0) {
    throw invalidArgument(`${operation} delayMs must be a finite number >= 0.`, { id, delayMs });
  }
  return Math.round(delayMs);
}

function requeued(ctx: SqliteContext, row: unknown, delayMs: number): boolean {
  if (row === undefined) return false;
  if (delayMs === 0) ctx.notify((row as { queue: string }).queue);
  return true;
}

export function retry(ctx: SqliteContext, ref: JobRef, options: RetryOptions): boolean {
  checkRef(ref, "retry");
  const delayMs = checkDelay(options.delayMs, "retry", ref.id);
  const row = ctx.statement(RETRY).get({ id: ref.id, attempt: ref.attempt, error: options.error, delayMs });
  return requeued(ctx, row, delayMs);
}

export function nack(ctx: SqliteContext, ref: JobRef, options?: NackOptions): boolean {
  checkRef(ref, "nack");
  const refund = options?.refundAttempt === true ? 1 : 0;
  return requeued(ctx, ctx.statement(NACK).get({ id: ref.id, attempt: ref.attempt, refund }), 0);
}

export function reschedule(ctx: SqliteContext, ref: JobRef, options: RescheduleOptions): boolean {
  checkRef(ref, "reschedule");
  const delayMs = checkDelay(options.delayMs, "reschedule", ref.id);
  const reason = options.reason ? `SNOOZE: ${options.reason}` : "SNOOZE";
  const row = ctx.statement(RESCHEDULE).get({ id: ref.id, attempt: ref.attempt, reason, delayMs });
  return requeued(ctx, row, delayMs);
}
