/**
 * The settle of items on a connection inside a transaction its caller holds: the settle statement
 * (settle-sql.ts, with its outbox and finished NOTIFY), then core's `settleFlows` for the flow steps among the
 * items that applied. `runs.settle` runs it for a batch holding flow steps; `steps.completeInTransaction` runs it
 * for a job's completion after the application's own writes, so both apply a done item the same way.
 */
import { type Settlement, settleFlows } from "@soniq/core/backend";
import type pg from "pg";
import type { PgContext } from "./context.js";
import { clientRunner, runFlow } from "./flow-store.js";
import { KEEP_KEYS } from "./requeue-keys.js";
import { type EncodedSettle, encodeSettle, settledFlags, settleSql } from "./settle-sql.js";

/** `items` settled on `client` (fenced by `workerId` when set); per item, whether it applied. */
export async function settleInTransaction(
  ctx: PgContext,
  client: pg.ClientBase,
  items: readonly Settlement[],
  workerId?: string,
): Promise<boolean[]> {
  if (items.length === 0) return [];
  return settleEncoded(ctx, client, items, encodeSettle(items, workerId), KEEP_KEYS);
}

/** As `settleInTransaction`, already encoded, with `keys` the requeue key-collision form (requeue-keys.ts). */
export async function settleEncoded(
  ctx: PgContext,
  client: pg.ClientBase,
  items: readonly Settlement[],
  encoded: EncodedSettle,
  keys: string,
): Promise<boolean[]> {
  const text = settleSql(encoded.parts, ctx.asyncOutcomes, keys, encoded.outbox);
  const res = await client.query<unknown[]>({ text, values: encoded.values, rowMode: "array" });
  const applied = settledFlags(items, encoded, res.rows);
  const flows = settleFlows(items, applied, () => new Date());
  if (flows !== null) await runFlow(clientRunner(client), flows);
  return applied;
}
