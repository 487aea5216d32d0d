/**
 * The test-only path of a settle holding dead_letter items (`testHooks.interruptDeadLetterMove`): it runs in
 * an explicit transaction on a dedicated connection, so the hook can kill that connection before COMMIT and
 * the kit can see that nothing moved. Production settles never come here.
 */
import type pg from "pg";
import type { PgContext } from "./context.js";
import { translatePgError } from "./errors.js";

/**
 * Runs `move` after BEGIN on a dedicated connection; `move` gets the connection and its backend pid and
 * ends the transaction itself (COMMIT or ROLLBACK). On an error the transaction is rolled back, the
 * connection discarded, and the error translated for `operation`.
 */
export async function inDedicatedTransaction<T>(
  ctx: PgContext,
  operation: string,
  jobId: string,
  move: (client: pg.PoolClient, pid: number) => Promise<T>,
): Promise<T> {
  const client = await ctx.pool.connect();
  // A connection killed while checked out emits 'error' outside any query; the failing query reports it.
  const ignore = () => {};
  client.on("error", ignore);
  let broken: unknown;
  try {
    await client.query("BEGIN");
    // Inside the transaction: behind a transaction-mode pooler, only then is the server session fixed.
    const pidRes = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    return await move(client, pidRes.rows[0]?.pid ?? 0);
  } catch (err) {
    broken = err;
    await rollbackQuietly(client);
    throw translatePgError(err, operation, { jobId });
  } finally {
    client.off("error", ignore);
    // A connection that failed mid-transaction is discarded rather than returned to the pool.
    client.release(broken instanceof Error ? broken : undefined);
  }
}

async function rollbackQuietly(client: pg.PoolClient): Promise<void> {
  try {
    await client.query("ROLLBACK");
  } catch {
    // The connection is gone; Postgres already rolled the transaction back.
  }
}
