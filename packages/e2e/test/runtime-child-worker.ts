/**
 * A worker process for runtime-process-kill.test.ts: `node --conditions=source --import tsx
 * runtime-child-worker.ts <sqlite|postgres> <file-or-url> <queue> <start|once>`. Its handler reports the
 * job over IPC and then never finishes, so the parent can SIGKILL the process mid-job. `start` runs a
 * started worker, `once` a `runOnce()` polling for the job (as a script would call it).
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, queue, mode] = process.argv.slice(2) as [string, string, string, "start" | "once"];
const backend =
  kind === "sqlite" ? sqliteBackend({ filename: target }) : postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend });
soniq.job(
  "process.kill_me",
  (_args, ctx) => {
    process.send?.({ started: ctx.jobId, workerId: ctx.workerId });
    return new Promise(() => {});
  },
  { queue },
);
const options = {
  queues: [queue],
  pollIntervalMs: 50,
  heartbeatIntervalMs: 60_000,
  staleAfterMs: 120_000,
  maintenanceIntervalMs: 600_000,
};
if (mode === "once") {
  // Nothing else holds this process open while runOnce waits for the job (SQLite has no socket).
  setInterval(() => {}, 60_000);
  const worker = soniq.worker(options);
  process.send?.({ ready: worker.id });
  for (;;) {
    await worker.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const worker = soniq.worker(options);
await worker.start();
// The started worker keeps this process alive until the parent kills it.
process.send?.({ ready: worker.id });
