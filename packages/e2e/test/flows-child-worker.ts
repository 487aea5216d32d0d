/**
 * A worker process for flows-process-kill.test.ts: `node --conditions=source --import tsx
 * flows-child-worker.ts <sqlite|postgres> <file-or-url> <queue>`. It runs a fan-in's parents (each a few
 * milliseconds, eight at a time) until the parent test SIGKILLs it, mid-flight: some parents running, some
 * settles (with their releases' bookkeeping) in flight. Its heartbeats are rare, so only a peer's
 * recovery finishes what it held.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, queue] = process.argv.slice(2) as [string, string, string];
const backend =
  kind === "sqlite" ? sqliteBackend({ filename: target }) : postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend, defaultQueue: queue });
soniq.job("flows.kill_parent", async () => {
  await new Promise((resolve) => setTimeout(resolve, 3));
  return process.pid;
});
soniq.job("flows.kill_child", async () => {
  process.send?.({ childRan: true });
  return "child process";
});
const worker = soniq.worker({
  queues: [queue],
  concurrency: 8,
  pollIntervalMs: 50,
  heartbeatIntervalMs: 60_000,
  staleAfterMs: 120_000,
  maintenanceIntervalMs: 600_000,
});
await worker.start();
process.send?.({ ready: worker.id });
