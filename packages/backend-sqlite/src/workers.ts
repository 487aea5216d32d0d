/**
 * Worker rows: register, heartbeat, stop, list, stale recovery, and the observability-only task registry.
 * Stale recovery runs in one IMMEDIATE transaction: the workers whose heartbeat is older than the
 * threshold become `stopped`, and the processing jobs of every worker past the threshold (stopped ones
 * included) go back to queued (attempts unchanged: the claim already counted the run).
 */
import type { StaleRecovery, WorkerInfo, WorkerRegistration } from "@soniq/core";
import { immediate, type SqliteContext } from "./context.js";
import { invalidArgument } from "./errors.js";
import { toWorker, type WorkerRecord } from "./rows.js";
import { jsonList, jsonOrNull, NOW, RELEASE_TAKEN_KEYS, WORKER_COLUMNS } from "./sql.js";

const REGISTER = `INSERT INTO soniq_workers (${WORKER_COLUMNS})
  VALUES (@id, @hostname, @pid, @queues, @concurrency, 'active', ${NOW}, ${NOW}, @version, @metadata)
  ON CONFLICT (id) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid, queues = excluded.queues,
    concurrency = excluded.concurrency, status = 'active', last_heartbeat = excluded.last_heartbeat,
    started_at = excluded.started_at, version = excluded.version, metadata = excluded.metadata`;

export function registerWorker(ctx: SqliteContext, worker: WorkerRegistration): void {
  if (typeof worker.id !== "string" || worker.id.length === 0 || !Number.isInteger(worker.pid)) {
    throw invalidArgument("registerWorker needs an id and an integer pid.", { id: worker.id });
  }
  ctx.statement(REGISTER).run({
    id: worker.id,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: JSON.stringify([...worker.queues]),
    concurrency: worker.concurrency,
    version: worker.version ?? null,
    metadata: jsonOrNull(worker.metadata, "metadata"),
  });
}

const HEARTBEAT = `UPDATE soniq_workers SET last_heartbeat = ${NOW}
  WHERE id = ? AND status <> 'stopped'`;
const HEARTBEAT_METADATA = `UPDATE soniq_workers SET last_heartbeat = ${NOW}, metadata = ?
  WHERE id = ? AND status <> 'stopped'`;

export function heartbeat(
  ctx: SqliteContext,
  workerId: string,
  metadata?: Record<string, unknown> | null,
): boolean {
  const result =
    metadata === undefined
      ? ctx.statement(HEARTBEAT).run(workerId)
      : ctx.statement(HEARTBEAT_METADATA).run(jsonOrNull(metadata, "metadata"), workerId);
  return result.changes > 0;
}

// The heartbeat is refreshed so jobs a stopping worker failed to give back wait one full threshold
// before recovery takes them (recovery also covers stopped workers).
const STOP = `UPDATE soniq_workers SET status = 'stopped', last_heartbeat = ${NOW} WHERE id = ?`;

export function stopWorker(ctx: SqliteContext, workerId: string): void {
  ctx.statement(STOP).run(workerId);
}

export function listWorkers(ctx: SqliteContext): WorkerInfo[] {
  const rows = ctx.statement(`SELECT ${WORKER_COLUMNS} FROM soniq_workers ORDER BY started_at, id`).all();
  return (rows as WorkerRecord[]).map(toWorker);
}

const MARK_STALE = `UPDATE soniq_workers SET status = 'stopped'
  WHERE status <> 'stopped' AND last_heartbeat < ${NOW} - ? RETURNING id`;
// Every worker past the threshold, stopped ones included: a job whose give-back failed at shutdown is
// not held forever.
const PAST_THRESHOLD = `SELECT id FROM soniq_workers WHERE last_heartbeat < ${NOW} - ?`;
const HELD_BY_WORKERS = `SELECT id FROM soniq_jobs
  WHERE status = 'processing' AND worker_id IN (SELECT value FROM json_each(?))`;
// One row per statement, so a job giving up a dedup_key sees the one requeued just before it.
const REQUEUE = `UPDATE soniq_jobs SET status = 'queued', worker_id = NULL, updated_at = ${NOW}, ${RELEASE_TAKEN_KEYS}
  WHERE id = ? AND status = 'processing' RETURNING id, queue`;

export function recoverStaleWorkers(ctx: SqliteContext, staleAfterMs: number): StaleRecovery {
  if (typeof staleAfterMs !== "number" || !Number.isFinite(staleAfterMs) || staleAfterMs < 0) {
    throw invalidArgument("staleAfterMs must be a finite number >= 0.", { staleAfterMs });
  }
  const { workerIds, jobs } = immediate(ctx, () => {
    const threshold = Math.round(staleAfterMs);
    const stale = ctx.statement(MARK_STALE).all(threshold) as { id: string }[];
    const past = ctx.statement(PAST_THRESHOLD).all(threshold) as { id: string }[];
    const workerIds = stale.map((w) => w.id);
    if (past.length === 0) return { workerIds, jobs: [] };
    const held = ctx.statement(HELD_BY_WORKERS).all(jsonList(past.map((w) => w.id))) as { id: string }[];
    const requeue = ctx.statement(REQUEUE);
    const jobs = held.map((job) => requeue.get(job.id) as { id: string; queue: string });
    return { workerIds, jobs };
  });
  for (const queue of new Set(jobs.map((j) => j.queue))) ctx.notify(queue);
  return { workerIds, requeuedJobIds: jobs.map((j) => j.id) };
}

const REGISTER_TASK = `INSERT INTO soniq_task_registry (task_name, worker_id, last_seen_at)
  VALUES (?, ?, ${NOW})
  ON CONFLICT (task_name, worker_id) DO UPDATE SET last_seen_at = excluded.last_seen_at`;

export function registerTaskNames(ctx: SqliteContext, workerId: string, names: readonly string[]): void {
  if (names.length === 0) return;
  immediate(ctx, () => {
    for (const name of names) ctx.statement(REGISTER_TASK).run(name, workerId);
  });
}

export function listTaskNames(
  ctx: SqliteContext,
): { taskName: string; workerId: string; lastSeenAt: Date }[] {
  const rows = ctx
    .statement(
      "SELECT task_name, worker_id, last_seen_at FROM soniq_task_registry ORDER BY task_name, worker_id",
    )
    .all() as { task_name: string; worker_id: string; last_seen_at: number }[];
  return rows.map((r) => ({
    taskName: r.task_name,
    workerId: r.worker_id,
    lastSeenAt: new Date(r.last_seen_at),
  }));
}
