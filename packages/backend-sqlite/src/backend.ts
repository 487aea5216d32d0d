/**
 * `sqliteBackend()`: the Backend contract on one better-sqlite3 connection. Every operation is a
 * synchronous better-sqlite3 call made inside the method call (so a `tx` insert joins the caller's
 * open transaction) and handed back as a promise. Operations live one per file; this file wires them.
 */
import type { Backend, BackendCapabilities } from "@soniq/core";
import { guardBackend } from "@soniq/core";
import { cancel } from "./cancel.js";
import { claim } from "./claim.js";
import { complete } from "./complete.js";
import { configureConnection, openDatabase } from "./connection.js";
import { runSync, type SqliteContext, type SqliteDatabase, StatementCache } from "./context.js";
import {
  markJobDeadLetter,
  markJobsDeadLetter,
  purgeDeadLetterJob,
  replayDeadLetterJob,
} from "./dead-letter.js";
import { getDeadLetterJob, listDeadLetterJobs } from "./dead-letter-list.js";
import { enqueue, enqueueMany } from "./enqueue.js";
import { deleteExpiredJobs, getJob, getQueueStats, listJobs } from "./jobs.js";
import { releaseLease, tryAcquireLease } from "./lease.js";
import { migrate, migrationStatus } from "./migrate.js";
import { resolveOptions, type SqliteBackendOptions, type SqliteBackendTarget } from "./options.js";
import { nack, reschedule, retry } from "./requeue.js";
import { resolveTxDatabase, type SqliteTx } from "./tx.js";
import { WakeUps } from "./wake-ups.js";
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
  // Wake-ups reach subscribers of this backend object only; other processes poll.
  notify: false,
  transactionalEnqueue: true,
  // Lease rows in soniq_leases are enforced by the database across processes.
  advisoryLocks: true,
  multiProcess: true,
});

type JobOperations = Omit<
  Backend<SqliteTx>,
  "name" | "capabilities" | "migrate" | "migrationStatus" | "close"
>;

/** Everything between setup and close, each a synchronous step handed back as a promise. */
function operations(ctx: SqliteContext, wakeUps: WakeUps): JobOperations {
  const txDb = (tx: unknown) => (tx === undefined ? ctx.db : resolveTxDatabase(tx));
  return {
    enqueue: (job, opts) => runSync("enqueue", () => enqueue(ctx, txDb(opts?.tx), job)),
    enqueueMany: (jobs, opts) => runSync("enqueueMany", () => enqueueMany(ctx, txDb(opts?.tx), jobs)),
    claim: (request) => runSync("claim", () => claim(ctx, request)),
    complete: (items) => runSync("complete", () => complete(ctx, items)),
    retry: (ref, opts) => runSync("retry", () => retry(ctx, ref, opts)),
    nack: (ref, opts) => runSync("nack", () => nack(ctx, ref, opts)),
    reschedule: (ref, opts) => runSync("reschedule", () => reschedule(ctx, ref, opts)),
    markJobDeadLetter: (id, opts) => runSync("markJobDeadLetter", () => markJobDeadLetter(ctx, id, opts)),
    markJobsDeadLetter: (items) => runSync("markJobsDeadLetter", () => markJobsDeadLetter(ctx, items)),
    cancel: (id) => runSync("cancel", () => cancel(ctx, id)),
    getJob: (id) => runSync("getJob", () => getJob(ctx, id)),
    listJobs: (filter) => runSync("listJobs", () => listJobs(ctx, filter)),
    getQueueStats: (filter) => runSync("getQueueStats", () => getQueueStats(ctx, filter)),
    listDeadLetterJobs: (filter) => runSync("listDeadLetterJobs", () => listDeadLetterJobs(ctx, filter)),
    getDeadLetterJob: (id) => runSync("getDeadLetterJob", () => getDeadLetterJob(ctx, id)),
    replayDeadLetterJob: (id, opts) =>
      runSync("replayDeadLetterJob", () => replayDeadLetterJob(ctx, id, opts)),
    purgeDeadLetterJob: (id) => runSync("purgeDeadLetterJob", () => purgeDeadLetterJob(ctx, id)),
    registerWorker: (worker) => runSync("registerWorker", () => registerWorker(ctx, worker)),
    heartbeat: (id, metadata) => runSync("heartbeat", () => heartbeat(ctx, id, metadata)),
    stopWorker: (id) => runSync("stopWorker", () => stopWorker(ctx, id)),
    listWorkers: () => runSync("listWorkers", () => listWorkers(ctx)),
    recoverStaleWorkers: (ms) => runSync("recoverStaleWorkers", () => recoverStaleWorkers(ctx, ms)),
    deleteExpiredJobs: () => runSync("deleteExpiredJobs", () => deleteExpiredJobs(ctx)),
    registerTaskNames: (id, names) => runSync("registerTaskNames", () => registerTaskNames(ctx, id, names)),
    listTaskNames: () => runSync("listTaskNames", () => listTaskNames(ctx)),
    subscribe: (listener) => runSync("subscribe", () => wakeUps.subscribe(listener)),
    tryAcquireLease: (name, holder, ttlMs) =>
      runSync("tryAcquireLease", () => tryAcquireLease(ctx, name, holder, ttlMs)),
    releaseLease: (name, holder) => runSync("releaseLease", () => releaseLease(ctx, name, holder)),
  };
}

/** An SQLite backend. Pass `{ filename }` to let it open (and later close) the file, or `{ database }`. */
export function sqliteBackend(
  target: SqliteBackendTarget,
  options: SqliteBackendOptions = {},
): Backend<SqliteTx> {
  const resolved = resolveOptions(target, options);
  const owned = resolved.filename !== null;
  const db: SqliteDatabase = resolved.database ?? openDatabase(resolved.filename ?? ":memory:", resolved);
  if (!owned && resolved.configureDatabase) configureConnection(db, resolved);

  const statements = new StatementCache();
  const wakeUps = new WakeUps();
  const ctx: SqliteContext = {
    db,
    statement: (sql, on = db) => statements.get(on, sql),
    generated: (key, build) => statements.get(db, key, build),
    notify: (queue) => wakeUps.notify(queue),
    faults: resolved.faults,
  };
  let closed: Promise<void> | undefined;
  return guardBackend({
    name: "sqlite",
    capabilities: CAPABILITIES,
    migrate: () => runSync("migrate", () => migrate(db, resolved.migrationsFolder)),
    migrationStatus: () => runSync("migrationStatus", () => migrationStatus(db, resolved.migrationsFolder)),
    ...operations(ctx, wakeUps),
    close: () => {
      closed ??= runSync("close", () => {
        wakeUps.clear();
        if (owned && db.open) db.close();
      });
      return closed;
    },
  });
}
