import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import { pgTable, text } from "drizzle-orm/pg-core";
import type pg from "pg";

declare const pool: pg.Pool;
declare const db: NodePgDatabase;
const users = pgTable("users", { email: text("email") });
const email = "ada@example.com";
const soniq = new Soniq({ backend: postgresBackend({ pool }) });
const sendWelcome = soniq.job("emails.send_welcome", async (_args: { to: string }) => {});

// #region snippet
// node-postgres: a PoolClient (or Client) inside your transaction
const client = await pool.connect();
try {
  await client.query("BEGIN");
  await client.query("INSERT INTO users (email) VALUES ($1)", [email]);
  await sendWelcome.enqueue({ to: email }, { tx: client });
  await client.query("COMMIT");
} catch (err) {
  await client.query("ROLLBACK");
  throw err;
} finally {
  client.release();
}

// Drizzle (node-postgres driver): a transaction, or the database itself
await db.transaction(async (tx) => {
  await tx.insert(users).values({ email });
  await sendWelcome.enqueue({ to: email }, { tx });
});
// #endregion snippet
