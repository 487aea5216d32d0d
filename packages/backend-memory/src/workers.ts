/**
 * Worker rows and stale-worker recovery.
 * A worker is active from registerWorker until stopWorker or until a peer declares it stale
 * (heartbeat older than the threshold); a stopped worker's heartbeat returns false so it knows.
 * Recovery requeues the processing jobs of every worker whose heartbeat is older than the threshold,
 * stopped ones included, so a job whose give-back failed during shutdown is not held forever.
 */
import type { StaleRecovery, WorkerInfo, WorkerRegistration } from "@soniq/core";
import { invalidArgument, requireNonNegative, requireString } from "./errors.js";
import { encodeJson, toWorkerInfo } from "./rows.js";
import type { MemoryStore } from "./store.js";

export function registerWorker(store: MemoryStore, worker: WorkerRegistration): void {
  const id = requireString(worker?.id, "id");
  if (!Array.isArray(worker.queues))
    throw invalidArgument("queues must be an array.", { queues: worker.queues });
  if (!Number.isSafeInteger(worker.concurrency) || worker.concurrency < 1) {
    throw invalidArgument("concurrency must be an integer >= 1.", { concurrency: worker.concurrency });
  }
  const now = store.now();
  store.workers.set(id, {
    id,
    hostname: String(worker.hostname),
    pid: worker.pid,
    queues: [...worker.queues],
    concurrency: worker.concurrency,
    status: "active",
    lastHeartbeat: now,
    startedAt: now,
    version: worker.version ?? null,
    metadataJson: worker.metadata == null ? null : encodeJson(worker.metadata, "metadata"),
  });
}

export function heartbeat(
  store: MemoryStore,
  workerId: string,
  metadata?: Record<string, unknown> | null,
): boolean {
  const worker = store.workers.get(workerId);
  if (worker === undefined || worker.status === "stopped") return false;
  worker.lastHeartbeat = store.now();
  if (metadata !== undefined)
    worker.metadataJson = metadata === null ? null : encodeJson(metadata, "metadata");
  return true;
}

export function stopWorker(store: MemoryStore, workerId: string): void {
  const worker = store.workers.get(workerId);
  if (worker === undefined) return;
  worker.status = "stopped";
  worker.lastHeartbeat = store.now();
}

export function listWorkers(store: MemoryStore): WorkerInfo[] {
  return [...store.workers.values()].map(toWorkerInfo);
}

export function recoverStaleWorkers(store: MemoryStore, staleAfterMs: number): StaleRecovery {
  requireNonNegative(staleAfterMs, "staleAfterMs");
  const now = store.now();
  const cutoff = now - staleAfterMs;
  const workerIds: string[] = [];
  const requeuedJobIds: string[] = [];
  const queues = new Set<string>();
  for (const worker of store.workers.values()) {
    if (worker.lastHeartbeat >= cutoff) continue;
    if (worker.status !== "stopped") {
      worker.status = "stopped";
      workerIds.push(worker.id);
    }
    const jobs = store.processingByWorker.get(worker.id);
    if (jobs === undefined) continue;
    for (const job of [...jobs]) {
      // Attempts stay as the claim counted them: the crash-loop guard at claim relies on it.
      store.transition(job, "queued", { workerId: null }, now);
      requeuedJobIds.push(job.id);
      queues.add(job.queue);
    }
  }
  for (const queue of queues) store.wake(queue);
  return { workerIds, requeuedJobIds };
}
