/** The workers facet: the registry (register, heartbeat, stop, list), stale recovery, and the task-name registry. */
import type {
  ProcessingJob,
  StaleRecovery,
  TaskNameRow,
  TaskRegistration,
  WorkerInfo,
  WorkerRegistration,
  WorkersFacet,
} from "@soniq/core/backend";
import { type PgContext, query, readQuery } from "./internal/context.js";
import { NEW_JOB_CHANNEL } from "./internal/listen-client.js";
import { requeueQuery } from "./internal/requeue-keys.js";
import { mapWorker, type Row, toDate, WORKER_COLUMNS } from "./internal/rows.js";

export function workersFacet(ctx: PgContext): WorkersFacet {
  return {
    register: (worker) => register(ctx, worker),
    heartbeat: (workerId, metadata) => heartbeat(ctx, workerId, metadata),
    stop: (workerId) => stop(ctx, workerId),
    list: () => list(ctx),
    recoverStale: (staleAfterMs) => recoverStale(ctx, staleAfterMs),
    processing: (workerId) => processing(ctx, workerId),
    registerTaskNames: (workerId, tasks) => registerTaskNames(ctx, workerId, tasks),
    listTaskNames: () => listTaskNames(ctx),
  };
}

async function register(ctx: PgContext, worker: WorkerRegistration): Promise<void> {
  await query(ctx, "workers.register", {
    text: `INSERT INTO soniq_workers (id, hostname, pid, queues, concurrency, status, version, metadata)
      VALUES ($1, $2, $3, $4::text[], $5, 'active', $6, $7::jsonb)
      ON CONFLICT (id) DO UPDATE SET hostname = EXCLUDED.hostname, pid = EXCLUDED.pid,
        queues = EXCLUDED.queues, concurrency = EXCLUDED.concurrency, status = 'active',
        version = EXCLUDED.version, metadata = EXCLUDED.metadata, last_heartbeat = now(), started_at = now()`,
    values: [
      worker.id,
      worker.hostname,
      worker.pid,
      [...worker.queues],
      worker.concurrency,
      worker.version,
      worker.metadata === null ? null : JSON.stringify(worker.metadata),
    ],
  });
}

async function heartbeat(
  ctx: PgContext,
  workerId: string,
  metadata: Record<string, unknown> | null,
): Promise<boolean> {
  const res = await query(ctx, "workers.heartbeat", {
    name: "soniq_heartbeat",
    text: `UPDATE soniq_workers SET last_heartbeat = now(), metadata = $2::jsonb
      WHERE id = $1 AND status <> 'stopped'`,
    values: [workerId, metadata === null ? null : JSON.stringify(metadata)],
  });
  return res.rowCount === 1;
}

async function stop(ctx: PgContext, workerId: string): Promise<void> {
  await query(ctx, "workers.stop", {
    text: "UPDATE soniq_workers SET status = 'stopped', last_heartbeat = now() WHERE id = $1",
    values: [workerId],
  });
}

async function list(ctx: PgContext): Promise<WorkerInfo[]> {
  const res = await readQuery<Row>(ctx, "workers.list", {
    text: `SELECT ${WORKER_COLUMNS} FROM soniq_workers ORDER BY started_at DESC, id`,
  });
  return res.rows.map(mapWorker);
}

/**
 * One statement: the stale workers are marked stopped, and every processing job whose worker is stopped
 * (just now or earlier) or has no row is requeued (attempts unchanged, worker_id cleared; its scheduled_at
 * is already past, so it is due now and keeps its place in line), and the queues that got jobs are
 * notified. The requeue reads soniq_workers as it was before the statement, so the workers marked by this
 * statement are matched through `stale`, the others through the anti-join. A job with no worker_id is not
 * touched (nobody claimed it for a worker, e.g. `runOnce`).
 */
const RECOVER = (keys: string) => `WITH stale AS (
  UPDATE soniq_workers SET status = 'stopped'
  WHERE status <> 'stopped' AND last_heartbeat < now() - $1 * interval '1 millisecond'
  RETURNING id),
requeued AS (
  UPDATE soniq_jobs SET status = 'queued', worker_id = NULL, updated_at = now()${keys}
  WHERE status = 'processing' AND worker_id IS NOT NULL
    AND (worker_id IN (SELECT id FROM stale)
      OR NOT EXISTS (SELECT 1 FROM soniq_workers w WHERE w.id = soniq_jobs.worker_id AND w.status <> 'stopped'))
  RETURNING id, queue),
notified AS (SELECT count(pg_notify('${NEW_JOB_CHANNEL}', q)) AS n FROM (SELECT DISTINCT queue AS q FROM requeued) s)
SELECT (SELECT coalesce(array_agg(id::text), '{}') FROM stale) AS worker_ids,
       (SELECT coalesce(array_agg(id::text), '{}') FROM requeued) AS job_ids
FROM notified`;

async function recoverStale(ctx: PgContext, staleAfterMs: number): Promise<StaleRecovery> {
  const res = await requeueQuery<{ worker_ids: string[]; job_ids: string[] }>(
    ctx,
    "workers.recoverStale",
    (keys) => ({ text: RECOVER(keys), values: [staleAfterMs] }),
  );
  const row = res.rows[0];
  return { workerIds: row?.worker_ids ?? [], requeuedJobIds: row?.job_ids ?? [] };
}

/** Read from the processing index (every processing row, a few per worker slot): no per-worker seek needed. */
async function processing(ctx: PgContext, workerId: string): Promise<ProcessingJob[]> {
  const res = await query<{ id: string; attempts: number }>(ctx, "workers.processing", {
    text: "SELECT id::text AS id, attempts FROM soniq_jobs WHERE status = 'processing' AND worker_id = $1::uuid",
    values: [workerId],
  });
  return res.rows.map((row) => ({ id: row.id, attempts: row.attempts }));
}

/**
 * One row per (task name, worker), its version replaced by each registration (a worker that re-registers after a
 * deploy reports its new handlers). A name listed twice counts once, its last version (an upsert cannot write
 * one row twice in a statement).
 */
async function registerTaskNames(
  ctx: PgContext,
  workerId: string,
  tasks: readonly TaskRegistration[],
): Promise<void> {
  if (tasks.length === 0) return;
  const byName = new Map<string, number | null>();
  for (const task of tasks) byName.set(task.name, task.version ?? null);
  await query(ctx, "workers.registerTaskNames", {
    text: `INSERT INTO soniq_task_registry (task_name, version, worker_id)
      SELECT t.name, t.version, $1 FROM unnest($2::text[], $3::int[]) AS t(name, version)
      ON CONFLICT (task_name, worker_id) DO UPDATE SET version = EXCLUDED.version, last_seen_at = now()`,
    values: [workerId, [...byName.keys()], [...byName.values()]],
  });
}

async function listTaskNames(ctx: PgContext): Promise<TaskNameRow[]> {
  const res = await query<Row>(ctx, "workers.listTaskNames", {
    text: "SELECT task_name, version, worker_id, last_seen_at FROM soniq_task_registry ORDER BY task_name, worker_id",
  });
  return res.rows.map((row) => ({
    taskName: String(row.task_name),
    workerId: String(row.worker_id),
    lastSeenAt: toDate(row.last_seen_at),
    version: row.version === null || row.version === undefined ? null : Number(row.version),
  }));
}
