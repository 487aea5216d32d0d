/** Worker registry (register, heartbeat, stop, list), stale-worker recovery, and the task-name registry. */
import type { StaleRecovery, WorkerInfo, WorkerRegistration } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";
import { NEW_JOB_CHANNEL } from "./listen.js";
import { requeueQuery } from "./requeue.js";
import { mapWorker, type Row, toDate, WORKER_COLUMNS } from "./rows.js";

export async function registerWorker(ctx: PgContext, worker: WorkerRegistration): Promise<void> {
  if (!isUuid(worker.id)) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", "registerWorker(): the worker id must be a UUID.", {
      context: { id: worker.id },
    });
  }
  await query(ctx, "registerWorker", {
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

export async function heartbeat(
  ctx: PgContext,
  workerId: string,
  metadata?: Record<string, unknown> | null,
): Promise<boolean> {
  if (!isUuid(workerId)) return false;
  // metadata undefined keeps what is stored; null clears it.
  const res = await query(ctx, "heartbeat", {
    name: "soniq_heartbeat",
    text: `UPDATE soniq_workers SET last_heartbeat = now(),
        metadata = CASE WHEN $2::bool THEN $3::jsonb ELSE metadata END
      WHERE id = $1 AND status <> 'stopped'`,
    values: [
      workerId,
      metadata !== undefined,
      metadata === undefined || metadata === null ? null : JSON.stringify(metadata),
    ],
  });
  return res.rowCount === 1;
}

export async function stopWorker(ctx: PgContext, workerId: string): Promise<void> {
  if (!isUuid(workerId)) return;
  await query(ctx, "stopWorker", {
    text: "UPDATE soniq_workers SET status = 'stopped', last_heartbeat = now() WHERE id = $1",
    values: [workerId],
  });
}

export async function listWorkers(ctx: PgContext): Promise<WorkerInfo[]> {
  const res = await query<Row>(ctx, "listWorkers", {
    text: `SELECT ${WORKER_COLUMNS} FROM soniq_workers ORDER BY started_at DESC, id`,
  });
  return res.rows.map(mapWorker);
}

// One statement: the workers are marked stopped and their jobs requeued together.
const RECOVER = (keys: string) => `WITH stale AS (
  UPDATE soniq_workers SET status = 'stopped'
  WHERE status <> 'stopped' AND last_heartbeat < now() - $1 * interval '1 millisecond'
  RETURNING id),
requeued AS (
  UPDATE soniq_jobs SET status = 'queued', worker_id = NULL, updated_at = now()${keys}
  WHERE status = 'processing' AND worker_id IN (SELECT id FROM stale)
  RETURNING id, queue),
notified AS (SELECT count(pg_notify('${NEW_JOB_CHANNEL}', q)) AS n FROM (SELECT DISTINCT queue AS q FROM requeued) s)
SELECT (SELECT coalesce(array_agg(id::text), '{}') FROM stale) AS worker_ids,
       (SELECT coalesce(array_agg(id::text), '{}') FROM requeued) AS job_ids
FROM notified`;

export async function recoverStaleWorkers(ctx: PgContext, staleAfterMs: number): Promise<StaleRecovery> {
  if (!Number.isFinite(staleAfterMs) || staleAfterMs < 0) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", "recoverStaleWorkers(): staleAfterMs must be >= 0.", {
      context: { staleAfterMs },
    });
  }
  const res = await requeueQuery<{ worker_ids: string[]; job_ids: string[] }>(
    ctx,
    "recoverStaleWorkers",
    (keys) => ({ text: RECOVER(keys), values: [staleAfterMs] }),
  );
  const row = res.rows[0];
  return { workerIds: row?.worker_ids ?? [], requeuedJobIds: row?.job_ids ?? [] };
}

export async function registerTaskNames(
  ctx: PgContext,
  workerId: string,
  names: readonly string[],
): Promise<void> {
  if (names.length === 0) return;
  await query(ctx, "registerTaskNames", {
    text: `INSERT INTO soniq_task_registry (task_name, worker_id)
      SELECT DISTINCT unnest($2::text[]), $1
      ON CONFLICT (task_name, worker_id) DO UPDATE SET last_seen_at = now()`,
    values: [workerId, [...names]],
  });
}

export async function listTaskNames(
  ctx: PgContext,
): Promise<{ taskName: string; workerId: string; lastSeenAt: Date }[]> {
  const res = await query<Row>(ctx, "listTaskNames", {
    text: "SELECT task_name, worker_id, last_seen_at FROM soniq_task_registry ORDER BY task_name, worker_id",
  });
  return res.rows.map((row) => ({
    taskName: String(row.task_name),
    workerId: String(row.worker_id),
    lastSeenAt: toDate(row.last_seen_at),
  }));
}
