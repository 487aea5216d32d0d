/**
 * The fault hook `interruptDeadLetterMove`, installed around the runs facet only by
 * `postgresBackendWithFaults()` (testing.ts, the `/testing` entry), so the production entry and the hot
 * `runs.settle` carry no test branch. When the hook hands back a function for a settle holding dead_letter
 * items, that settle runs instead as the same statement inside an explicit transaction on a dedicated
 * connection, with the function awaited before COMMIT: the kit can kill the connection after the dead-letter
 * rows were inserted and the job rows deleted but before anything committed, and see that nothing changed.
 * Every other settle goes to the facet unchanged.
 */
import type { RunsFacet, Settlement } from "@soniq/core/backend";
import type { PgContext } from "./context.js";
import { translatePgError } from "./errors.js";
import { KEEP_KEYS } from "./requeue-keys.js";
import { encodeSettle, settledFlags, settleSql } from "./settle-sql.js";
import { inTransaction } from "./tx.js";

/**
 * Awaited inside a settle that holds dead_letter items, after the statement ran and before its
 * transaction commits; `session.pid` is the backend pid of the settle's connection, `jobId` the first
 * dead_letter item's id.
 */
export type DeadLetterInterrupt = (jobId: string, session: { pid: number }) => Promise<void> | void;

export function withInterruptedMove(
  runs: RunsFacet,
  ctx: PgContext,
  hook: () => DeadLetterInterrupt | undefined,
): RunsFacet {
  return {
    claim: runs.claim,
    reportProgress: runs.reportProgress,
    settle: async (items: readonly Settlement[], workerId?: string) => {
      const encoded = encodeSettle(items, workerId);
      const jobId = encoded.firstDeadLetterId;
      const interrupt = jobId === null ? undefined : hook();
      if (jobId === null || interrupt === undefined) return runs.settle(items, workerId);
      const fail = (err: unknown) => translatePgError(err, "runs.settle", { jobId });
      const rows = await inTransaction(ctx, fail, async (client) => {
        const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0;
        const res = await client.query<unknown[]>({
          text: settleSql(encoded.parts, false, KEEP_KEYS, encoded.outbox),
          values: encoded.values,
          rowMode: "array",
        });
        await interrupt(jobId, { pid });
        return res.rows;
      });
      return settledFlags(items, encoded, rows);
    },
  };
}
