/**
 * A worker process for results-processes.test.ts: `node --conditions=source --import tsx
 * results-child-worker.ts <sqlite|postgres> <file-or-url> <queue>`. Its handler reports progress, tells the
 * parent (over IPC) the instant it returns, and returns `{ doubled }`; the parent waits for the outcome.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, queue] = process.argv.slice(2) as [string, string, string];
const backend =
  kind === "sqlite" ? sqliteBackend({ filename: target }) : postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend });
soniq.job(
  "results.child",
  async (args: { n: number }, ctx) => {
    ctx.progress({ n: args.n });
    process.send?.({ finishing: ctx.jobId, at: Date.now() });
    return { doubled: args.n * 2 };
  },
  { queue },
);
const worker = soniq.worker({ queues: [queue], pollIntervalMs: 20 });
await worker.start();
process.send?.({ ready: worker.id });
process.on("disconnect", () => {
  void soniq.close().then(() => process.exit(0));
});
