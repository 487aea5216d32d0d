/**
 * The worker's other outcomes, each one fenced statement (one round trip): retry after a failure, nack
 * (give the job back, optionally refunding the claim's attempt), reschedule (snooze without spending an attempt).
 */
import type { JobRef, NackOptions, RescheduleOptions, RetryOptions } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { ASYNC_COMMIT, type PgContext } from "./context.js";
import { isUuid } from "./errors.js";
import { KEEP_KEYS, requeueQuery } from "./requeue.js";

const FENCE = "id = $1 AND status = 'processing' AND attempts = $2";

// `keys` is KEEP_KEYS on the hot path, CLEAR_COLLIDING_KEYS after a dedup-index conflict (requeue.ts).
const RETRY = (keys: string, from: string) => `UPDATE soniq_jobs
SET status = 'queued', last_error = $3, scheduled_at = now() + $4 * interval '1 millisecond',
    updated_at = now()${keys}
${from ? `FROM ${from}` : ""}
WHERE ${FENCE}`;

const NACK = (keys: string, from: string) => `UPDATE soniq_jobs
SET status = 'queued', worker_id = NULL, attempts = GREATEST(attempts - $3::int, 0), scheduled_at = now(),
    updated_at = now()${keys}
${from ? `FROM ${from}` : ""}
WHERE ${FENCE}`;

const RESCHEDULE = (keys: string, from: string) => `UPDATE soniq_jobs
SET status = 'queued', attempts = attempts - 1, last_error = $3,
    scheduled_at = now() + $4 * interval '1 millisecond', updated_at = now()${keys}
${from ? `FROM ${from}` : ""}
WHERE ${FENCE}`;

/** Named only on the hot path; the key-clearing variant is rare and runs unnamed. */
function nameFor(ctx: PgContext, name: string, keys: string): string | undefined {
  if (keys !== KEEP_KEYS) return undefined;
  return ctx.asyncOutcomes ? `${name}_async` : name;
}

function fromFor(ctx: PgContext): string {
  return ctx.asyncOutcomes ? ASYNC_COMMIT : "";
}

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
  const res = await requeueQuery(ctx, "retry", (keys) => ({
    name: nameFor(ctx, "soniq_retry", keys),
    text: RETRY(keys, fromFor(ctx)),
    values: [ref.id, ref.attempt, options.error, options.delayMs],
  }));
  return res.rowCount === 1;
}

export async function nack(ctx: PgContext, ref: JobRef, options?: NackOptions): Promise<boolean> {
  if (!checkRef("nack", ref)) return false;
  const res = await requeueQuery(ctx, "nack", (keys) => ({
    name: nameFor(ctx, "soniq_nack", keys),
    text: NACK(keys, fromFor(ctx)),
    values: [ref.id, ref.attempt, options?.refundAttempt === true ? 1 : 0],
  }));
  return res.rowCount === 1;
}

export async function reschedule(ctx: PgContext, ref: JobRef, options: RescheduleOptions): Promise<boolean> {
  if (!checkRef("reschedule", ref, options.delayMs)) return false;
  const reason = options.reason ? `SNOOZE: ${options.reason}` : "SNOOZE";
  const res = await requeueQuery(ctx, "reschedule", (keys) => ({
    name: nameFor(ctx, "soniq_reschedule", keys),
    text: RESCHEDULE(keys, fromFor(ctx)),
    values: [ref.id, ref.attempt, reason, options.delayMs],
  }));
  return res.rowCount === 1;
}
