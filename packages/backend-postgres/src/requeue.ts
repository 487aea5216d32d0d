/**
 * Putting a row back to `queued` (retry, nack, snooze, stale recovery) can collide with the partial unique
 * indexes: while the job ran, a new queued job may have taken its dedup key (or, for a unique job, its
 * name + args). The hot path runs the plain statement; only on that conflict does it run again with
 * `CLEAR_COLLIDING_KEYS`, which drops the key from the row being requeued, so the job still runs and the
 * newer queued job keeps the key (as the memory backend does: the first queued holder keeps a key).
 */
import type pg from "pg";
import { type PgContext, query, type Statement } from "./context.js";
import { isQueuedKeyConflict } from "./errors.js";

export const KEEP_KEYS = "";

export const CLEAR_COLLIDING_KEYS = `,
    dedup_key = CASE WHEN soniq_jobs.dedup_key IS NULL THEN NULL
      WHEN EXISTS (SELECT 1 FROM soniq_jobs d WHERE d.dedup_key = soniq_jobs.dedup_key AND d.status = 'queued')
      THEN NULL ELSE soniq_jobs.dedup_key END,
    unique_job = CASE WHEN NOT soniq_jobs.unique_job THEN false
      WHEN EXISTS (SELECT 1 FROM soniq_jobs d WHERE d.job_name = soniq_jobs.job_name
        AND d.args_hash = soniq_jobs.args_hash AND d.status = 'queued' AND d.unique_job)
      THEN false ELSE soniq_jobs.unique_job END`;

/**
 * Run `build(KEEP_KEYS)`; on a queued-key conflict run `build(CLEAR_COLLIDING_KEYS)` (a few times, as a
 * concurrent enqueue can take the key again between the check and the write).
 */
export async function requeueQuery<R extends pg.QueryResultRow = Record<string, unknown>>(
  ctx: PgContext,
  operation: string,
  build: (keys: string) => Statement,
): Promise<pg.QueryResult<R>> {
  try {
    return await query<R>(ctx, operation, build(KEEP_KEYS));
  } catch (err) {
    if (!isQueuedKeyConflict(err)) throw err;
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await query<R>(ctx, operation, build(CLEAR_COLLIDING_KEYS));
    } catch (err) {
      if (attempt >= 3 || !isQueuedKeyConflict(err)) throw err;
    }
  }
}
