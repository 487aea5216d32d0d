/**
 * A worker process for runtime-process-kill.test.ts: `node --conditions=source --import tsx
 * runtime-child-worker.ts <sqlite|postgres> <file-or-url> <queue> <start|once> [lease]` (`lease`: report ready
 * only once the worker holds the maintenance lease). Its handler reports the
 * job over IPC and then never finishes, so the parent can SIGKILL the process mid-job. `start` runs a
 * started worker, `once` a `runOnce()` polling for the job (as a script would call it).
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, queue, mode, waitFor] = process.argv.slice(2) as [
  string,
  string,
  string,
  "start" | "once",
  "lease" | undefined,
];
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
// With `lease`: ready once the start's maintenance holds its lease (taken asynchronously after start()
// resolves), for the case that checks a killed holder's lease does not delay recovery. Renewing as the same
// holder, with the worker's own TTL (at most staleAfterMs), changes nothing else.
while (
  waitFor === "lease" &&
  !(await soniq.backend.leases.tryAcquire("soniq.maintenance", worker.id, options.staleAfterMs))
) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
// The started worker keeps this process alive until the parent kills it.
process.send?.({ ready: worker.id });
