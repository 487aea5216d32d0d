/**
 * An explicit transaction on a connection of the pool: BEGIN, `fn`, COMMIT; on an error ROLLBACK, the
 * error translated for `operation`. For writes that must commit together (an action and its audit row,
 * a limited claim under its queue row's lock).
 */
import type pg from "pg";
import type { PgContext } from "./context.js";
import { translatePgError } from "./errors.js";

export async function inTransaction<T>(
  ctx: PgContext,
  operation: string,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await ctx.pool.connect();
  } catch (err) {
    throw translatePgError(err, operation);
  }
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw translatePgError(err, operation);
  } finally {
    client.release(broken);
  }
}
