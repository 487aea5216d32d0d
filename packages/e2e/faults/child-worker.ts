/**
 * A worker process for the fault suite: `child-worker.ts <sqlite|postgres> <file-or-url> <queue> <log> <mode>`.
 * Every run start and every confirmed done (job:done fires once the settlement is committed) is appended
 * to <log> as `start <id> <pid>` / `done <id> <pid>`, so the parent can check that no job ran again after
 * its done was committed and that none ran twice; each start and done also goes to the parent as an IPC message
 * (`{ started }`, `{ done }`), which the parent reads as it happens. Modes: `work` (each job takes `FAULT_JOB_MS`), `hold`
 * (claims one job, holds the maintenance lease, never finishes).
 */
import { appendFileSync } from "node:fs";
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, queue, log, mode] = process.argv.slice(2) as [string, string, string, string, string];
const jobMs = Number(process.env.FAULT_JOB_MS ?? 20);
const backend =
  kind === "sqlite" ? sqliteBackend({ filename: target }) : postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend });
const note = (line: string) => appendFileSync(log, `${line} ${process.pid}\n`);
soniq.job(
  "fault.work",
  async (_args, ctx) => {
    note(`start ${ctx.jobId}`);
    process.send?.({ started: ctx.jobId, workerId: ctx.workerId });
    if (mode === "hold") return new Promise(() => {});
    await new Promise((r) => setTimeout(r, jobMs));
    return ctx.attempt;
  },
  { queue },
);
const worker = soniq.worker({
  queues: [queue],
  concurrency: mode === "hold" ? 1 : Number(process.env.FAULT_CONCURRENCY ?? 10),
  pollIntervalMs: 50,
  heartbeatIntervalMs: 100,
  staleAfterMs: Number(process.env.FAULT_STALE_MS ?? 1000),
});
worker.on("job:done", ({ job }) => {
  note(`done ${job.id}`);
  process.send?.({ done: job.id });
});
// An error line (`error <during> <ms since start> <message>`) explains a figure the suite did not expect.
const t0 = Date.now();
worker.on("error", ({ error, during }) =>
  note(
    `error ${during} ${Date.now() - t0} ${String((error as Error)?.message ?? error).replace(/\s+/g, " ")}`,
  ),
);
await worker.start();
process.send?.({ ready: worker.id });
