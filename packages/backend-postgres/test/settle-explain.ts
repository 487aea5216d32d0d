/**
 * EXPLAIN ANALYZE of the settle statement the backend prepares for `items`, run as a prepared statement under
 * `mode` and rolled back (shared by the settle plan tests).
 */
import type { Settlement } from "@soniq/core/backend";
import type pg from "pg";
import { KEEP_KEYS } from "../src/internal/requeue-keys.js";
import { encodeSettle, settleSql } from "../src/internal/settle-sql.js";

export async function explainSettle(
  client: pg.Client,
  items: readonly Settlement[],
  mode: "auto" | "force_generic_plan",
): Promise<string> {
  const encoded = encodeSettle(items);
  await client.query("BEGIN");
  try {
    await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
    await client.query(`PREPARE settle_plan AS ${settleSql(encoded.parts, false, KEEP_KEYS)}`);
    const values = encoded.values.map((v) => (typeof v === "string" ? v : `{${v.join(",")}}`));
    const params = values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ");
    const res = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) EXECUTE settle_plan(${params})`);
    // The parameters' literals (hundreds of ids, the items object) are shortened so a failure message stays readable.
    return res.rows
      .map((r: Record<string, string>) => r["QUERY PLAN"])
      .join("\n")
      .replace(/'[^']*'::(uuid\[\]|jsonb)/g, "'...'::$1");
  } finally {
    await client.query("ROLLBACK");
    await client.query("DEALLOCATE ALL");
  }
}
