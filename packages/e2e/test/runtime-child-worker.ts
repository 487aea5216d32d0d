/**
 * A worker process for runtime-process-kill.test.ts: `node --conditions=source --import tsx
 * runtime-child-worker.ts <sqlite|postgres> <file-or-url> <queue>`. Its handler reports the job over IPC
 * and then never finishes, so the parent can SIGKILL the process mid-job.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, queue] = process.argv.slice(2) as [string, string, string];
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
const worker = soniq.worker({
  queues: [queue],
  pollIntervalMs: 50,
  heartbeatIntervalMs: 60_000,
  staleAfterMs: 120_000,
  maintenanceIntervalMs: 600_000,
});
await worker.start();
// The started worker keeps this process alive until the parent kills it.
process.send?.({ ready: worker.id });
