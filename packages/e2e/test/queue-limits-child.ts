/**
 * A worker process for queue-limits.test.ts: `node --conditions=source --import tsx queue-limits-child.ts
 * <sqlite|postgres> <file-or-url> <queue,queue,...>`. Its handler works for `args.ms` and returns the
 * claim's timestamp (the database clock's `updated_at` at claim). Stops on the IPC message "stop".
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, queues] = process.argv.slice(2) as [string, string, string];
const backend =
  kind === "sqlite" ? sqliteBackend({ filename: target }) : postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend });
soniq.job("limits.work", async (args: { ms: number }, ctx) => {
  await new Promise((resolve) => setTimeout(resolve, args.ms));
  return { claimedAt: ctx.job.updatedAt.getTime() };
});
const worker = soniq.worker({
  queues: queues.split(","),
  concurrency: 4,
  pollIntervalMs: 20,
  heartbeatIntervalMs: 60_000,
  staleAfterMs: 120_000,
  maintenanceIntervalMs: 600_000,
});
await worker.start();
process.on("message", async (message) => {
  if (message !== "stop") return;
  await soniq.close();
  process.exit(0);
});
process.send?.({ ready: worker.id });
