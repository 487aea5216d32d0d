/**
 * Transactions, both kinds, in one place:
 * - the caller's (`tx`, transactional enqueue): the caller's handle runs the insert, so it commits or rolls
 *   back with the caller's own writes (and the NOTIFY is delivered only on that commit). Accepted handles: a
 *   node-postgres `Client` / `PoolClient`, or a Drizzle node-postgres database or transaction. A `Pool` is
 *   refused: each of its queries may run on a different connection.
 * - the backend's own (`inTransaction`): BEGIN, work, COMMIT on a connection of the pool, for writes that
 *   must commit together (an action and its audit row, a limited claim under its queue row's lock).
 * - the application's inside the backend's (`applicationTransaction`, durable steps): a connection of the pool
 *   handed to the user's function as `tx`, then a fenced write of the backend's; both commit or neither.
 */
import { SoniqError } from "@soniq/core/backend";
import { type SQL, type SQLWrapper, sql } from "drizzle-orm";
import pg from "pg";
import type { PgContext } from "./context.js";
import { translatePgError } from "./errors.js";

/** A Drizzle node-postgres database or transaction (anything with drizzle's `execute`). */
export interface DrizzlePgExecutor {
  execute(query: SQLWrapper): PromiseLike<unknown>;
}

/** What `tx` may be: a pg client checked out of a pool or connected by hand, or a Drizzle db / transaction. */
export type PgTx = pg.PoolClient | pg.Client | DrizzlePgExecutor;

/** Runs one parameterised statement on the caller's handle and returns its rows. */
export type TxRunner = (text: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/** `text` with `$n` placeholders as a Drizzle SQL object, each value bound as one parameter. */
export function toDrizzleSql(text: string, values: readonly unknown[]): SQL {
  const chunks: SQL[] = [];
  let last = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    const at = match.index ?? 0;
    chunks.push(sql.raw(text.slice(last, at)));
    chunks.push(sql`${sql.param(values[Number(match[1]) - 1])}`);
    last = at + match[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  return sql.join(chunks);
}

function rowsOf(result: unknown): Record<string, unknown>[] {
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

function unsupported(reason: string): SoniqError {
  return new SoniqError(
    "SONIQ_TRANSACTION_UNSUPPORTED",
    `tx ${reason}. Pass a pg PoolClient or Client inside your transaction, or a Drizzle node-postgres database or transaction.`,
  );
}

/**
 * node-postgres queues a query on a client that is not connected yet until it connects, which for a client
 * nobody connects is forever; an ended one rejects with an untyped error. A transaction's client is
 * connected by definition, so anything else is refused at once. The state lives in pg's (stable since
 * 8.0) `_connected` / `_ending` fields; a client-like handle without them is taken as it is. A client is known
 * by its shape, not by `instanceof pg.Client`: the application's pg is often another copy than this package's
 * (pg is a plain dependency), and a Client of that copy fails `instanceof` but hangs all the same.
 */
function isPgClient(x: unknown): boolean {
  if (x instanceof pg.Client) return true;
  if (typeof x !== "object" || x === null) return false;
  const c = x as { query?: unknown; connect?: unknown };
  return (
    typeof c.query === "function" &&
    typeof c.connect === "function" &&
    "connectionParameters" in x &&
    "_connected" in x
  );
}

function notQueryable(client: unknown): string | null {
  if (!isPgClient(client)) return null;
  const state = client as unknown as { _connected?: unknown; _ending?: unknown };
  if (state._ending === true) return "is a pg client that was ended (closed)";
  if (state._connected === false)
    return "is a pg client that is not connected (call connect() and BEGIN first)";
  return null;
}

/** The pg client behind a Drizzle node-postgres database (`$client`) or transaction (`session.client`). */
function drizzleClient(tx: object): unknown {
  const own = (tx as { $client?: unknown }).$client;
  if (own !== undefined) return own;
  const session = (tx as { session?: { client?: unknown } }).session;
  return typeof session === "object" && session !== null ? session.client : undefined;
}

/** Turn the caller's `tx` into a runner, or explain why it cannot be used. */
export function txRunner(tx: unknown, operation: string): TxRunner {
  if (typeof tx !== "object" || tx === null) throw unsupported("is not a database handle");
  if (tx instanceof pg.Pool || ("totalCount" in tx && "idleCount" in tx))
    throw unsupported("is a pg Pool, whose queries may each run on another connection");
  const closed = notQueryable(tx) ?? notQueryable(drizzleClient(tx));
  if (closed !== null) throw unsupported(closed);
  const handle = tx as { query?: unknown; execute?: unknown };
  if (typeof handle.execute === "function") {
    const drizzle = tx as DrizzlePgExecutor;
    return async (text, values) => {
      try {
        return rowsOf(await drizzle.execute(toDrizzleSql(text, values)));
      } catch (err) {
        throw translatePgError(err, operation);
      }
    };
  }
  if (typeof handle.query === "function") {
    const client = tx as pg.ClientBase;
    return async (text, values) => {
      try {
        return (await client.query<Record<string, unknown>>(text, values)).rows;
      } catch (err) {
        throw translatePgError(err, operation);
      }
    };
  }
  throw unsupported("has neither query() (pg) nor execute() (Drizzle)");
}

/** How a transaction's body ends: COMMIT, or ROLLBACK; either way with its answer. */
interface Ending<T> {
  commit: boolean;
  result: T;
}

/**
 * BEGIN, `body`, then COMMIT or ROLLBACK as it says, on a connection of the pool; a throw rolls back and leaves as
 * `fail` makes it. A connection whose ROLLBACK fails (killed mid-transaction) is discarded rather than returned to
 * the pool (its transaction dies with it, so nothing commits).
 */
async function transaction<T>(
  ctx: PgContext,
  fail: (err: unknown) => Error,
  body: (client: pg.PoolClient) => Promise<Ending<T>>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await ctx.pool.connect();
  } catch (err) {
    throw fail(err);
  }
  // A connection killed while checked out emits 'error' outside any query; the failing query reports it.
  const ignore = () => {};
  client.on("error", ignore);
  let broken: Error | undefined;
  const rollback = async () => {
    try {
      await client.query("ROLLBACK");
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
  };
  try {
    await client.query("BEGIN");
    const ending = await body(client);
    if (ending.commit) await client.query("COMMIT");
    else await rollback();
    return ending.result;
  } catch (err) {
    await rollback();
    throw fail(err);
  } finally {
    client.off("error", ignore);
    client.release(broken);
  }
}

const failWith = (failure: string | ((err: unknown) => Error)) =>
  typeof failure === "string" ? (err: unknown) => translatePgError(err, failure) : failure;

/**
 * An explicit transaction on a connection of the pool: BEGIN, `fn`, COMMIT; on an error ROLLBACK. Errors leave
 * as `failure` makes them: an operation name (translated by `translatePgError`) or a function. A connection
 * whose ROLLBACK fails (killed mid-transaction) is discarded rather than returned to the pool.
 */
export async function inTransaction<T>(
  ctx: PgContext,
  failure: string | ((err: unknown) => Error),
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return transaction(ctx, failWith(failure), async (client) => ({ commit: true, result: await fn(client) }));
}

/**
 * The application's transaction around a fenced write (`steps.saveInTransaction`, `completeInTransaction`):
 * BEGIN, `value = fn(client)` (the user's writes, on the pool client the user gets as `tx`), then
 * `write(client, value)`; COMMIT when the write applied, else ROLLBACK (the user's writes vanish with it) and
 * `applied: false`. No lock is taken before `fn` has run: the fence is checked by the write. A throwing `fn`
 * rolls back and its error leaves as it is; a database error of the backend's own leaves translated.
 */
export async function applicationTransaction<T>(
  ctx: PgContext,
  operation: string,
  fn: (client: pg.PoolClient) => T | Promise<T>,
  write: (client: pg.PoolClient, value: T) => Promise<boolean>,
): Promise<{ applied: boolean; value: T }> {
  type Result = { ok: true; applied: boolean; value: T } | { ok: false; thrown: unknown };
  const result = await transaction<Result>(ctx, failWith(operation), async (client) => {
    let value: T;
    try {
      value = await fn(client);
    } catch (thrown) {
      return { commit: false, result: { ok: false, thrown } };
    }
    const applied = await write(client, value);
    return { commit: applied, result: { ok: true, applied, value } };
  });
  if (!result.ok) throw result.thrown;
  return { applied: result.applied, value: result.value };
}
