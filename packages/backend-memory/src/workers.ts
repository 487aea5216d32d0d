/**
 * The workers facet: worker rows, stale-worker recovery and the task-name registry.
 * A worker is active from register until stop or until recovery declares it stale (heartbeat older than
 * the threshold); a stopped worker's heartbeat returns false so it knows. Recovery then requeues every
 * processing job whose worker is stopped (now or earlier) or has no row, found through the store's
 * per-worker index; a job without a worker id is left alone (core never claims without one).
 */
import type { StaleRecovery, TaskNameRow, WorkerRegistration, WorkersFacet } from "@soniq/core/backend";
import { encodeJson, toWorkerInfo } from "./internal/rows.js";
import type { MemoryStore } from "./internal/store.js";

export function workersFacet(store: MemoryStore): WorkersFacet {
  return {
    register: async (worker) => register(store, worker),
    heartbeat: async (workerId, metadata) => {
      const worker = store.workers.get(workerId);
      if (worker === undefined || worker.status !== "active") return false;
      worker.lastHeartbeat = store.now();
      // The heartbeat carries the worker's current metadata: null clears it, as in the SQL backends.
      worker.metadataJson = metadata === null ? null : encodeJson(metadata, "metadata");
      return true;
    },
    stop: async (workerId) => {
      const worker = store.workers.get(workerId);
      if (worker !== undefined) worker.status = "stopped";
    },
    list: async () => [...store.workers.values()].map(toWorkerInfo),
    recoverStale: async (staleAfterMs) => recoverStale(store, staleAfterMs),
    processing: async (workerId) =>
      [...(store.processingByWorker.get(workerId) ?? [])].map((job) => ({
        id: job.id,
        attempts: job.attempts,
      })),
    registerTaskNames: async (workerId, tasks) => {
      const now = store.now();
      // One row per (task name, worker): registering again replaces its version and moves lastSeenAt.
      for (const { name: taskName, version } of tasks) {
        store.taskNames.set(`${taskName}\u0000${workerId}`, { taskName, workerId, lastSeenAt: now, version });
      }
    },
    listTaskNames: async () => listTaskNames(store),
  };
}

function register(store: MemoryStore, worker: WorkerRegistration): void {
  const now = store.now();
  store.workers.set(worker.id, {
    id: worker.id,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: [...worker.queues],
    concurrency: worker.concurrency,
    status: "active",
    lastHeartbeat: now,
    startedAt: now,
    version: worker.version,
    metadataJson: worker.metadata === null ? null : encodeJson(worker.metadata, "metadata"),
  });
}

function recoverStale(store: MemoryStore, staleAfterMs: number): StaleRecovery {
  const now = store.now();
  const cutoff = now - staleAfterMs;
  const workerIds: string[] = [];
  for (const worker of store.workers.values()) {
    if (worker.status === "active" && worker.lastHeartbeat < cutoff) {
      worker.status = "stopped";
      workerIds.push(worker.id);
    }
  }
  const requeuedJobIds: string[] = [];
  const queues = new Set<string>();
  for (const [workerId, jobs] of [...store.processingByWorker]) {
    if (store.workers.get(workerId)?.status === "active") continue;
    for (const job of [...jobs]) {
      // Attempts stay as the claim counted them: core dead-letters a job claimed past its max_attempts.
      store.transition(job, "queued", { workerId: null, scheduledAt: now }, now);
      requeuedJobIds.push(job.id);
      queues.add(job.queue);
    }
  }
  for (const queue of queues) store.wake(queue);
  return { workerIds, requeuedJobIds };
}

function listTaskNames(store: MemoryStore): TaskNameRow[] {
  return [...store.taskNames.values()]
    .sort((a, b) => compare(a.taskName, b.taskName) || compare(a.workerId, b.workerId))
    .map((r) => ({
      taskName: r.taskName,
      workerId: r.workerId,
      lastSeenAt: new Date(r.lastSeenAt),
      version: r.version,
    }));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
