/**
 * What every facet receives: the pools, the outcome commit mode, whether statements are named, and the
 * limited-queue cache, plus the one way to run a statement on a pool (every failure leaves as a `SoniqError`).
 */
import type pg from "pg";
import { sqlState, translatePgError } from "./errors.js";
import type { LimitedQueues } from "./queue-limits.js";

/**
 * A FROM / USING item whose only effect is `SET LOCAL synchronous_commit = off` for the statement's own
 * implicit transaction: it commits without waiting for the WAL flush; the session keeps its setting.
 */
export const ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit";

export interface PgContext {
  readonly pool: pg.Pool;
  /** The operator's reads (a replica's pool with `readConnectionString`, else `pool`). */
  readonly readPool: pg.Pool;
  /** Whether statements with a `name` are sent named (prepared once per connection). */
  readonly naming: StatementNaming;
  /** Worker outcomes (`runs.settle`) commit asynchronously. */
  readonly asyncOutcomes: boolean;
  /** Which queues are limited (cached briefly): the claim takes those on the limited path. */
  readonly limits: LimitedQueues;
}

export interface Statement {
  /** Named statements are prepared once per connection and reused (the hot path), unless switched off. */
  name?: string;
  text: string;
  values?: unknown[];
  /** 'array': rows as arrays in column order (the claim's hot path maps them by position). */
  rowMode?: "array";
  /** Per-statement type parsers (the claim's timestamptz memo). */
  types?: pg.CustomTypesConfig;
}

// Named statements the server (a pooler) cannot keep: "already exists" (another client prepared it on this
// server connection) or "does not exist" (prepared on another one). Both fail before anything executes.
const LOST_PREPARED = new Set(["42P05", "26000"]);

/**
 * `preparedStatements`: true or false as set; "auto" names statements until the server answers one of
 * LOST_PREPARED, then sends every statement unnamed for the rest of the backend's life.
 */
export class StatementNaming {
  #named: boolean;
  constructor(private readonly setting: boolean | "auto") {
    this.#named = setting !== false;
  }
  get named(): boolean {
    return this.#named;
  }
  /**
   * True when `err` means the pooler lost a named statement: naming is (now) off, retry unnamed. Several
   * statements in flight may fail so; each is retried.
   */
  switchedOff(err: unknown): boolean {
    if (this.setting !== "auto" || !LOST_PREPARED.has(sqlState(err) ?? "")) return false;
    this.#named = false;
    return true;
  }
}

async function run<R extends pg.QueryResultRow>(
  ctx: PgContext,
  pool: pg.Pool,
  operation: string,
  statement: Statement,
): Promise<pg.QueryResult<R>> {
  const { name, ...unnamed } = statement;
  const named = ctx.naming.named && name !== undefined;
  try {
    return await pool.query<R>(named ? statement : unnamed);
  } catch (err) {
    if (!named || !ctx.naming.switchedOff(err)) throw translatePgError(err, operation);
  }
  try {
    return await pool.query<R>(unnamed);
  } catch (err) {
    throw translatePgError(err, operation);
  }
}

/** Run one statement on the primary's pool; every failure leaves as a `SoniqError`. */
export function query<R extends pg.QueryResultRow = Record<string, unknown>>(
  ctx: PgContext,
  operation: string,
  statement: Statement,
): Promise<pg.QueryResult<R>> {
  return run<R>(ctx, ctx.pool, operation, statement);
}

/** Run one of the operator's reads on the read pool (the replica when configured). */
export function readQuery<R extends pg.QueryResultRow = Record<string, unknown>>(
  ctx: PgContext,
  operation: string,
  statement: Statement,
): Promise<pg.QueryResult<R>> {
  return run<R>(ctx, ctx.readPool, operation, statement);
}
