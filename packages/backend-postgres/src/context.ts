/**
 * What every operation file receives: the pool and the test-only fault hooks. Operations are plain
 * functions of this context, so the backend object in `backend.ts` is only wiring.
 */
import type pg from "pg";
import { translatePgError } from "./errors.js";

/** Test-only hooks (the conformance kit's fault injection). Never set them in production. */
export interface PostgresTestHooks {
  /**
   * When set, `markJobDeadLetter` runs as two statements in one transaction on a dedicated connection
   * (INSERT ... SELECT into the dead-letter table, then DELETE from soniq_jobs) and awaits this hook
   * between them. `session.pid` is that connection's backend pid, so a test can
   * `pg_terminate_backend(pid)` from another connection, or throw to abort the transaction.
   */
  afterDeadLetterInsert?: (jobId: string, session: { pid: number }) => Promise<void> | void;
}

export interface PgContext {
  readonly pool: pg.Pool;
  readonly testHooks: PostgresTestHooks;
}

export interface Statement {
  /** Named statements are prepared once per connection and reused (the hot path). */
  name?: string;
  text: string;
  values?: unknown[];
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
