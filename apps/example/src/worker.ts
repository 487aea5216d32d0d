/**
 * A worker in its own process: `pnpm --dir apps/example worker`, beside a server started with
 * SONIQ_EXAMPLE_WORKER=off (same SONIQ_DATABASE_URL). Stops gracefully on SIGINT / SIGTERM.
 */
import { DEFAULT_WORKER_OPTIONS, openSoniq } from "./app.js";
import { readConfig } from "./config.js";
import { exitOnSignals } from "./signals.js";
import { reportStartupError } from "./startup-error.js";
import { tracingFromEnv } from "./tracing.js";
import { logWorkerEvents } from "./worker-log.js";

const config = readConfig(process.env);
const tracing = tracingFromEnv(process.env);
const { db, soniq } = await openSoniq(
  config.database,
  { reviewDelayMs: config.reviewDelayMs },
  tracing,
).catch((err: unknown) => {
  reportStartupError(err, config.database);
  process.exit();
});
const worker = soniq.worker(DEFAULT_WORKER_OPTIONS);
logWorkerEvents(worker, (line) => console.log(`[worker] ${line}`));
// A started worker holds the process open until it is stopped, so this process runs until a signal.
exitOnSignals(async () => {
  try {
    await soniq.close(); // stops the worker gracefully, then the backend
  } finally {
    await db.close();
    await tracing?.shutdown();
  }
});
await worker.start();
console.log(
  `Soniq worker ${worker.id} running on ${db.description} (queues: all). Ctrl-C stops it gracefully.`,
);
