/**
 * Putting a row back to `queued` (a settle's requeue items, stale recovery) can collide with the partial
 * unique indexes: while the job ran, a new queued job may have taken its dedup key (or, for a unique job,
 * its name + args). The hot path runs the plain statement (`KEEP_KEYS`); only on that conflict does it run
 * again with `CLEAR_COLLIDING_KEYS`, which drops the key from a row being requeued when a queued row holds
 * it, so the job still runs and the newer queued job keeps the key (the first queued holder keeps a key, as
 * on every backend). One case that form cannot see: two rows requeued by the same statement with the same
 * key (neither is queued in the statement's snapshot). If the conflict persists, the last form
 * (`CLEAR_KEYS`) drops the keys of every row the statement requeues: it cannot conflict, and a dropped key
 * only means a later enqueue with that key makes a new job instead of returning this one.
 *
 * Each form is one whole statement: a conflict fails it as a whole (nothing written), so running the next
 * form is safe. The SET fragments refer to the target table as `soniq_jobs` (no alias).
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

export const CLEAR_KEYS = ",\n    dedup_key = NULL, unique_job = false";

/** How many times the colliding-keys form runs (a concurrent enqueue can take a key again in between). */
const COLLIDING_TRIES = 2;

/**
 * Run `build(KEEP_KEYS)`; on a queued-key conflict, the key-clearing forms in turn. `build` gets the SET
 * fragment to append and whether this is the hot path (only the hot path's statement is named).
 */
export async function requeueQuery<R extends pg.QueryResultRow = Record<string, unknown>>(
  ctx: PgContext,
  operation: string,
  build: (keys: string, hot: boolean) => Statement,
): Promise<pg.QueryResult<R>> {
  const forms = [KEEP_KEYS, ...Array<string>(COLLIDING_TRIES).fill(CLEAR_COLLIDING_KEYS), CLEAR_KEYS];
  for (let i = 0; ; i++) {
    try {
      return await query<R>(ctx, operation, build(forms[i] ?? CLEAR_KEYS, i === 0));
    } catch (err) {
      if (i >= forms.length - 1 || !isQueuedKeyConflict(err)) throw err;
    }
  }
}
