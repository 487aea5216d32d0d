/**
 * `pnpm example:serve`: the orders API on PORT (default 3000), with a worker in the same process
 * unless SONIQ_EXAMPLE_WORKER=off. Database from SONIQ_DATABASE_URL (default: apps/example/soniq.db).
 */
import { createApp } from "./app.js";
import { readConfig } from "./config.js";
import { exitOnSignals } from "./signals.js";
import { reportStartupError } from "./startup-error.js";
import { tracingFromEnv } from "./tracing.js";
import { logWorkerEvents } from "./worker-log.js";

const config = readConfig(process.env);
const app = await createApp({
  database: config.database,
  worker: config.inProcessWorker,
  jobs: { reviewDelayMs: config.reviewDelayMs },
  tracing: tracingFromEnv(process.env),
}).catch((err: unknown) => {
  reportStartupError(err, config.database);
  process.exit();
});
if (app.worker) logWorkerEvents(app.worker, (line) => console.log(`[worker] ${line}`));
exitOnSignals(() => app.close()); // before listening, so a signal during start-up also stops cleanly
const url = await app.listen(config.port, config.host);

console.log(`Soniq example on ${url} (${app.db.description}; ${app.worker ? "worker in this process" : "no worker here: run pnpm --dir apps/example worker"})
Try:
  curl -s -X POST ${url}/orders -H 'content-type: application/json' -d '{"customer":"Ada","email":"ada@example.com","totalCents":4250}'
  curl -s ${url}/stats
  curl -s ${url}/dead-letters
  curl -s -X POST ${url}/dead-letters/<id>/replay
  curl -s -X POST ${url}/orders/<id>/returns
  curl -s -X POST ${url}/returns/<return id>/received -H 'content-type: application/json' -d '{"condition":"as_new"}'
  curl -s ${url}/jobs/<return id>/steps
Ctrl-C (or kill -TERM ${process.pid}) stops it gracefully.`);
