/**
 * Wires the example together: database (chosen by URL) -> Soniq + order store -> jobs -> HTTP server,
 * plus a worker in the same process unless `worker: false` (then run src/worker.ts beside it).
 * `close()` shuts down in order: stop taking requests, stop the worker gracefully, close Soniq, close
 * the database connection the app opened.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Soniq, type Worker, type WorkerOptions, type WorkerScheduleOptions } from "@soniq/core";
import { type AppDatabase, type DatabaseTarget, openDatabase } from "./database.js";
import { defineFulfilment, type Fulfilment } from "./fulfilment.js";
import { requestListener } from "./http.js";
import { type AppJobs, defineJobs, type JobSettings } from "./jobs.js";
import { defineReturns, type Returns } from "./returns.js";
import { type Tracing, tracedListener } from "./tracing.js";

export interface AppOptions {
  database: DatabaseTarget;
  /** Run a worker in this process. Default true. */
  worker?: boolean;
  /** Options for that worker. Default `{ concurrency: 5, pollIntervalMs: 250, schedules: true }`. */
  workerOptions?: WorkerOptions & WorkerScheduleOptions;
  jobs?: JobSettings;
  /** Trace requests and jobs (see tracing.ts). Default: none. */
  tracing?: Tracing | null;
}

export interface App {
  soniq: Soniq;
  db: AppDatabase;
  jobs: AppJobs;
  /** The order's fulfilment workflow (charge and reserve, then ship, then notify). */
  fulfilment: Fulfilment;
  /** Returns: one job with durable steps (a label, a wait for the parcel, a hold, the refund). */
  returns: Returns;
  /** The in-process worker, started by `listen()` (null with `worker: false`). */
  worker: Worker | null;
  server: Server;
  /** Starts the worker (if any) and the HTTP server; resolves with the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Database, Soniq (schema set up), the app's table, the jobs, the fulfilment flow's steps and the return job:
 * what both the server and a worker need.
 */
export async function openSoniq(database: DatabaseTarget, settings?: JobSettings, tracing?: Tracing | null) {
  const db = await openDatabase(database);
  const soniq = new Soniq({ backend: db.backend });
  if (tracing) soniq.use(tracing.plugin);
  try {
    await soniq.setup();
    await db.orders.migrate();
  } catch (err) {
    await soniq.close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
  const jobs = defineJobs(soniq, db.orders, settings);
  const fulfilment = defineFulfilment(soniq, db.orders, jobs);
  const returns = defineReturns(soniq, db.orders, settings);
  return { db, soniq, jobs, fulfilment, returns };
}

/** The app's workers also run the scheduler (the nightly report): one of them leads at a time. */
export const DEFAULT_WORKER_OPTIONS: WorkerOptions & WorkerScheduleOptions = {
  concurrency: 5,
  pollIntervalMs: 250,
  schedules: true,
};

export async function createApp(options: AppOptions): Promise<App> {
  const { db, soniq, jobs, fulfilment, returns } = await openSoniq(
    options.database,
    options.jobs,
    options.tracing,
  );
  const worker =
    options.worker === false ? null : soniq.worker(options.workerOptions ?? DEFAULT_WORKER_OPTIONS);
  const listener = requestListener({ soniq, orders: db.orders, jobs, fulfilment, returns });
  const tracing = options.tracing ?? null;
  const server = createServer(tracing ? tracedListener(tracing.tracer, listener) : listener);
  let closing: Promise<void> | undefined;

  const close = async () => {
    // Finish the requests in flight (new connections are refused), then stop the worker gracefully.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    try {
      await soniq.close(); // stops the worker: running jobs finish (or are handed back), nothing is lost
    } finally {
      await db.close();
      await tracing?.shutdown();
    }
  };

  return {
    soniq,
    db,
    jobs,
    fulfilment,
    returns,
    worker,
    server,
    async listen(port = 0, host = "127.0.0.1") {
      if (worker) await worker.start();
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => resolve());
      });
      const { port: bound } = server.address() as AddressInfo;
      return `http://${host}:${bound}`;
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}
