/**
 * `postgresBackend`: the Backend contract on PostgreSQL. This file is wiring only; each operation lives
 * in its own file (claim.ts, enqueue.ts, complete.ts, ...) as a function of the shared context.
 */
import type { Backend, BackendCapabilities } from "@soniq/core";
import { claim } from "./claim.js";
import { complete } from "./complete.js";
import type { PgContext } from "./context.js";
import { markJobDeadLetter } from "./dead-letter.js";
import {
  getDeadLetterJob,
  listDeadLetterJobs,
  purgeDeadLetterJob,
  replayDeadLetterJob,
} from "./dead-letter-admin.js";
import { markJobsDeadLetter } from "./dead-letter-batch.js";
import { enqueue, enqueueMany } from "./enqueue.js";
import { cancel, deleteExpiredJobs, getJob, getQueueStats, listJobs } from "./jobs.js";
import { AdvisoryLeases } from "./lease.js";
import { WakeUpChannel } from "./listen.js";
import { migrate, migrationStatus } from "./migrate.js";
import { type PostgresBackendOptions, type PostgresConnection, resolveConnection } from "./options.js";
import { nack, reschedule, retry } from "./retry.js";
import type { PgTx } from "./tx.js";
import {
  heartbeat,
  listTaskNames,
  listWorkers,
  recoverStaleWorkers,
  registerTaskNames,
  registerWorker,
  stopWorker,
} from "./workers.js";

const CAPABILITIES: BackendCapabilities = Object.freeze({
  notify: true,
  transactionalEnqueue: true,
  advisoryLocks: true,
  multiProcess: true,
});

/** The Postgres backend's type: a `Backend` whose `tx` is a pg client or a Drizzle db / transaction. */
export type PostgresBackend = Backend<PgTx>;

export function postgresBackend(
  connection: PostgresConnection,
  options: PostgresBackendOptions = {},
): PostgresBackend {
  const resolved = resolveConnection(connection, options);
  const ctx: PgContext = {
    pool: resolved.pool,
    asyncOutcomes: options.asyncOutcomes === true,
    testHooks: { ...options.testHooks },
  };
  const wakeUps = new WakeUpChannel(resolved.clientConfig);
  const leases = new AdvisoryLeases(resolved.clientConfig);
  let closing: Promise<void> | undefined;

  const close = async (): Promise<void> => {
    const results = await Promise.allSettled([
      wakeUps.close(),
      leases.close(),
      resolved.ownsPool ? resolved.pool.end() : Promise.resolve(),
    ]);
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failures.length > 0) {
      throw new AggregateError(
        failures.map((f) => f.reason),
        "postgresBackend close() had failures",
      );
    }
  };

  return {
    name: "postgres",
    capabilities: CAPABILITIES,
    migrate: () => migrate(ctx),
    migrationStatus: () => migrationStatus(ctx),
    enqueue: (job, opts) => enqueue(ctx, job, opts),
    enqueueMany: (jobs, opts) => enqueueMany(ctx, jobs, opts),
    claim: (request) => claim(ctx, request),
    complete: (items) => complete(ctx, items),
    retry: (ref, opts) => retry(ctx, ref, opts),
    nack: (ref, opts) => nack(ctx, ref, opts),
    reschedule: (ref, opts) => reschedule(ctx, ref, opts),
    markJobDeadLetter: (id, opts) => markJobDeadLetter(ctx, id, opts),
    markJobsDeadLetter: (items) => markJobsDeadLetter(ctx, items),
    cancel: (id) => cancel(ctx, id),
    getJob: (id) => getJob(ctx, id),
    listJobs: (filter) => listJobs(ctx, filter),
    getQueueStats: (filter) => getQueueStats(ctx, filter),
    listDeadLetterJobs: (filter) => listDeadLetterJobs(ctx, filter),
    getDeadLetterJob: (id) => getDeadLetterJob(ctx, id),
    replayDeadLetterJob: (id, opts) => replayDeadLetterJob(ctx, id, opts),
    purgeDeadLetterJob: (id) => purgeDeadLetterJob(ctx, id),
    registerWorker: (worker) => registerWorker(ctx, worker),
    heartbeat: (workerId, metadata) => heartbeat(ctx, workerId, metadata),
    stopWorker: (workerId) => stopWorker(ctx, workerId),
    listWorkers: () => listWorkers(ctx),
    recoverStaleWorkers: (staleAfterMs) => recoverStaleWorkers(ctx, staleAfterMs),
    deleteExpiredJobs: () => deleteExpiredJobs(ctx),
    registerTaskNames: (workerId, names) => registerTaskNames(ctx, workerId, names),
    listTaskNames: () => listTaskNames(ctx),
    subscribe: (listener) => wakeUps.subscribe(listener),
    tryAcquireLease: (name, holder, ttlMs) => leases.tryAcquire(name, holder, ttlMs),
    releaseLease: (name, holder) => leases.release(name, holder),
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
