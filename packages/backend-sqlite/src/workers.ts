/**
 * The workers facet: register, heartbeat, stop, list, stale recovery, and the task registry (which jobs each
 * worker serves, with the version of their arguments its handlers take: explain's `newer_version` reads it).
 *
 * Stale recovery runs in one IMMEDIATE transaction: the active workers whose heartbeat is older than the
 * threshold become `stopped`; then every processing job whose worker is stopped (just now or earlier) or
 * has no row goes back to queued, due now, `worker_id` cleared, attempts unchanged (the claim already
 * counted the run). A processing job with no worker id is left alone (core never claims without one).
 */
import type {
  ProcessingJob,
  StaleRecovery,
  TaskNameRow,
  TaskRegistration,
  WorkerRegistration,
  WorkersFacet,
} from "@soniq/core/backend";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { toWorker, type WorkerRecord } from "./internal/rows.js";
import { jsonOrNull, NOW, RELEASE_TAKEN_KEYS, WORKER_COLUMNS } from "./internal/sql.js";

export function workersFacet(ctx: SqliteContext): WorkersFacet {
  return {
    register: (worker) => runSync("workers.register", () => register(ctx, worker)),
    heartbeat: (workerId, metadata) =>
      runSync(
        "workers.heartbeat",
        () => ctx.statement(HEARTBEAT).run(jsonOrNull(metadata, "metadata"), workerId).changes > 0,
      ),
    stop: (workerId) =>
      runSync("workers.stop", () => {
        ctx.statement(STOP).run(workerId);
      }),
    list: () => runSync("workers.list", () => (ctx.statement(LIST).all() as WorkerRecord[]).map(toWorker)),
    recoverStale: (staleAfterMs) => runSync("workers.recoverStale", () => recoverStale(ctx, staleAfterMs)),
    processing: (workerId) =>
      runSync("workers.processing", () => ctx.statement(PROCESSING).all(workerId) as ProcessingJob[]),
    registerTaskNames: (workerId, tasks) =>
      runSync("workers.registerTaskNames", () => registerTaskNames(ctx, workerId, tasks)),
    listTaskNames: () => runSync("workers.listTaskNames", () => listTaskNames(ctx)),
  };
}

const REGISTER = `INSERT INTO soniq_workers (${WORKER_COLUMNS})
  VALUES (@id, @hostname, @pid, @queues, @concurrency, 'active', ${NOW}, ${NOW}, @version, @metadata)
  ON CONFLICT (id) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid, queues = excluded.queues,
    concurrency = excluded.concurrency, status = 'active', last_heartbeat = excluded.last_heartbeat,
    started_at = excluded.started_at, version = excluded.version, metadata = excluded.metadata`;

function register(ctx: SqliteContext, worker: WorkerRegistration): void {
  ctx.statement(REGISTER).run({
    id: worker.id,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: JSON.stringify(worker.queues),
    concurrency: worker.concurrency,
    version: worker.version,
    metadata: jsonOrNull(worker.metadata, "metadata"),
  });
}

const HEARTBEAT = `UPDATE soniq_workers SET last_heartbeat = ${NOW}, metadata = ?
  WHERE id = ? AND status <> 'stopped'`;

// The heartbeat is refreshed so the row shows when the worker stopped.
const STOP = `UPDATE soniq_workers SET status = 'stopped', last_heartbeat = ${NOW} WHERE id = ?`;

const LIST = `SELECT ${WORKER_COLUMNS} FROM soniq_workers ORDER BY started_at, id`;

const MARK_STALE = `UPDATE soniq_workers SET status = 'stopped'
  WHERE status <> 'stopped' AND last_heartbeat < ${NOW} - ? RETURNING id`;
// Held by a stopped worker or by a worker id without a row (possible when foreign keys are off).
const ORPHANED = `SELECT id FROM soniq_jobs
  WHERE status = 'processing' AND worker_id IS NOT NULL
    AND worker_id NOT IN (SELECT id FROM soniq_workers WHERE status <> 'stopped')`;
// One row per statement, so a job giving up a dedup_key sees the one requeued just before it.
const REQUEUE = `UPDATE soniq_jobs
  SET status = 'queued', worker_id = NULL, scheduled_at = ${NOW}, updated_at = ${NOW}, ${RELEASE_TAKEN_KEYS}
  WHERE id = ? AND status = 'processing' RETURNING id, queue`;

function recoverStale(ctx: SqliteContext, staleAfterMs: number): StaleRecovery {
  const { workerIds, jobs } = immediate(ctx, () => {
    const stale = ctx.statement(MARK_STALE).all(Math.round(staleAfterMs)) as { id: string }[];
    const orphaned = ctx.statement(ORPHANED).all() as { id: string }[];
    const requeue = ctx.statement(REQUEUE);
    const jobs = orphaned.map((job) => requeue.get(job.id) as { id: string; queue: string });
    return { workerIds: stale.map((w) => w.id), jobs };
  });
  for (const queue of new Set(jobs.map((j) => j.queue))) ctx.notify(queue);
  return { workerIds, requeuedJobIds: jobs.map((j) => j.id) };
}

// Registering a (task, worker) again replaces its version: a restarted worker may run a newer handler.
const REGISTER_TASK = `INSERT INTO soniq_task_registry (task_name, worker_id, version, last_seen_at)
  VALUES (?, ?, ?, ${NOW})
  ON CONFLICT (task_name, worker_id) DO UPDATE SET version = excluded.version,
    last_seen_at = excluded.last_seen_at`;

function registerTaskNames(ctx: SqliteContext, workerId: string, tasks: readonly TaskRegistration[]): void {
  if (tasks.length === 0) return;
  immediate(ctx, () => {
    const register = ctx.statement(REGISTER_TASK);
    for (const task of tasks) register.run(task.name, workerId, task.version ?? null);
  });
}

const LIST_TASK_NAMES =
  "SELECT task_name, worker_id, version, last_seen_at FROM soniq_task_registry ORDER BY task_name, worker_id";

function listTaskNames(ctx: SqliteContext): TaskNameRow[] {
  const rows = ctx.statement(LIST_TASK_NAMES).all() as {
    task_name: string;
    worker_id: string;
    version: number | null;
    last_seen_at: number;
  }[];
  return rows.map((r) => ({
    taskName: r.task_name,
    workerId: r.worker_id,
    lastSeenAt: new Date(r.last_seen_at),
    version: r.version,
  }));
}

const PROCESSING = "SELECT id, attempts FROM soniq_jobs WHERE status = 'processing' AND worker_id = ?";
