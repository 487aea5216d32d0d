import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

// #region snippet
import Database from "better-sqlite3";

const db = new Database("./app.db");
const soniq = new Soniq({ backend: sqliteBackend({ database: db }) });
const sendWelcome = soniq.job("emails.send_welcome", async (args: { to: string }) => {
  /* ... */
});
await soniq.setup();

let queued: Promise<{ id: string; deduplicated: boolean }> | undefined;
db.transaction(() => {
  db.prepare("INSERT INTO users (email) VALUES (?)").run("ada@example.com");
  queued = sendWelcome.enqueue({ to: "ada@example.com" }, { tx: db }); // inserted now, no await
})(); // commit: the user and the job; a throw inside rolls both back
const { id } = await queued!; // resolves (or rejects) only now
// #endregion snippet
