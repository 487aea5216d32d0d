/**
 * What every operation file receives: the pool and the test-only fault hooks. Operations are plain
 * functions of this context, so the backend object in `backend.ts` is only wiring.
 */
import type pg from "pg";
import { translatePgError } from "./errors.js";

/** Runs between the two steps of a split dead-letter move; `session.pid` is the move's backend pid. */
export type DeadLetterInterrupt = (jobId: string, session: { pid: number }) => Promise<void> | void;

/** Test-only hooks (the conformance kit's fault injection). Never set them in production. */
export interface PostgresTestHooks {
  /**
   * Consulted before each `markJobDeadLetter`. Return undefined for the normal move (one statement).
   * Return a function to run this move instead as two statements in one transaction on a dedicated
   * connection (INSERT ... SELECT into the dead-letter table, then DELETE from soniq_jobs) with the
   * function awaited between them: it may `pg_terminate_backend(session.pid)` from another connection, or
   * throw, and the move must then leave the pre-move state.
   */
  interruptDeadLetterMove?: () => DeadLetterInterrupt | undefined;
}

/**
 * A FROM / USING item whose only effect is `SET LOCAL synchronous_commit = off` for the statement's own
 * implicit transaction: it commits without waiting for the WAL flush; the session keeps its setting.
 */
export const ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit";

export interface PgContext {
  readonly pool: pg.Pool;
  /** Worker outcomes (complete, retry, nack, reschedule, dead-letter move) commit asynchronously. */
  readonly asyncOutcomes: boolean;
  readonly testHooks: PostgresTestHooks;
}

export interface Statement {
  /** Named statements are prepared once per connection and reused (the hot path). */
  name?: string;
  text: string;
  values?: unknown[];
  /** 'array': rows as arrays in column order (the claim's hot path maps them by position). */
  rowMode?: "array";
  /** Per-statement type parsers (the claim's timestamptz memo). */
  types?: pg.CustomTypesConfig;
}

/** Run one statement on the pool; every failure leaves as a `SoniqError`. */
export async function query<R extends pg.QueryResultRow = Record<string, unknown>>(
  ctx: PgContext,
  operation: string,
  statement: Statement,
): Promise<pg.QueryResult<R>> {
  try {
    return await ctx.pool.query<R>(statement);
  } catch (err) {
    throw translatePgError(err, operation);
  }
}
