import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";
import Database from "better-sqlite3";
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

const db = new Database("./app.db");
const users = sqliteTable("users", { email: text("email") });
const soniq = new Soniq({ backend: sqliteBackend({ database: db }) });
const sendWelcome = soniq.job("emails.send_welcome", async (_args: { to: string }) => {});

// #region snippet
import { drizzle } from "drizzle-orm/better-sqlite3";

const orm = drizzle({ client: db });
let queued: Promise<unknown> | undefined;
orm.transaction((tx) => {
  tx.insert(users).values({ email: "ada@example.com" }).run();
  queued = sendWelcome.enqueue({ to: "ada@example.com" }, { tx });
});
await queued;
// #endregion snippet
