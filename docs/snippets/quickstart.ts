import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

// Define: a Soniq app over a database (the embedded SQLite file here) and a typed job. Soniq logs
// nothing unless you pass a logger: `console` prints `message key=value` lines; pino works as well.
const soniq = new Soniq({ backend: sqliteBackend({ filename: "./soniq.db" }), logger: console });

const sendWelcome = soniq.job(
  "emails.send_welcome", // dotted lowercase names
  async (args: { to: string }, ctx) => {
    ctx.logger.info({ to: args.to }, "sending the welcome email"); // ctx: attempt, signal, job, logger...
    return { sent: true, attempt: ctx.attempt }; // stored as the job's result
  },
  { maxAttempts: 5, retry: { backoff: "exponential", delayMs: 1000, maxDelayMs: 60_000 } },
);

// Setup: create or upgrade Soniq's tables (idempotent, safe when several processes run it at once).
await soniq.setup();

// Enqueue: one row in soniq_jobs. `runAt`, `delayMs`, `priority`, `queue`, `dedupKey` and `tx` are options.
const { id } = await sendWelcome.enqueue({ to: "ada@example.com" });
console.log("enqueued", id);

// Work: claim due jobs, run them (10 at a time), retry failures, dead-letter what keeps failing.
const worker = soniq.worker({ concurrency: 10 });
worker.on("job:done", ({ job, result }) => console.log(`${job.jobName} done:`, result));
// Shut down gracefully on SIGTERM: stop claiming, let running jobs finish, close the database.
process.once("SIGTERM", () => void soniq.close());
await worker.start();
// It prints (ids differ on each run), then stops on SIGTERM:
// -> enqueued <id>
// -> worker started workerId=<id> queues=null concurrency=10
// -> sending the welcome email jobId=<id> jobName=emails.send_welcome attempt=1 to=ada@example.com
// -> emails.send_welcome done: { sent: true, attempt: 1 }
// -> worker stopped workerId=<id>
