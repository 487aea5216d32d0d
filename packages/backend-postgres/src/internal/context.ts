/**
 * What every facet receives: the pool, the outcome commit mode and the test-only fault hooks, plus the one
 * way to run a statement on the pool (every failure leaves as a `SoniqError`).
 */
import type pg from "pg";
import type { PostgresTestHooks } from "../options.js";
import { translatePgError } from "./errors.js";
import type { LimitedQueues } from "./queue-limits.js";

/**
 * A FROM / USING item whose only effect is `SET LOCAL synchronous_commit = off` for the statement's own
 * implicit transaction: it commits without waiting for the WAL flush; the session keeps its setting.
 */
export const ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit";

export interface PgContext {
  readonly pool: pg.Pool;
  /** Worker outcomes (`runs.settle`) commit asynchronously. */
  readonly asyncOutcomes: boolean;
  readonly testHooks: PostgresTestHooks;
  /** Which queues are limited (cached briefly): the claim takes those on the limited path. */
  readonly limits: LimitedQueues;
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
