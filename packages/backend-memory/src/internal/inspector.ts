/**
 * Raw access to a memory backend's state for tests: read rows without the API under test, attempt raw status
 * writes (through the same guard every write path uses), age heartbeats. Its shape matches
 * `@soniq/testkit`'s `BackendInspector`: pass it as the conformance harness's `inspector`.
 */
import type { DeadLetterJob, Job } from "@soniq/core/backend";
import type { MemoryBackend } from "../backend.js";
import { toDeadLetterJob, toJob } from "./rows.js";
import { type MemoryStore, STORE } from "./store.js";

export interface MemoryInspector {
  readJob(id: string): Promise<Job | null>;
  readDeadLetterJob(id: string): Promise<DeadLetterJob | null>;
  /** Write `status` straight to the row, as `UPDATE soniq_jobs SET status = ...` would. */
  writeJobStatus(id: string, status: string): Promise<void>;
  /** Move a worker's last heartbeat `byMs` into the past. */
  backdateWorkerHeartbeat(workerId: string, byMs: number): Promise<void>;
}

/** The inspector of the object `memoryBackend()` returned (not of a copy or a guarded wrapper). */
export function memoryInspector(backend: MemoryBackend): MemoryInspector {
  const store = (backend as MemoryBackend & { [STORE]?: MemoryStore })[STORE];
  if (store === undefined) throw new Error("memoryInspector() needs the object memoryBackend() returned.");
  return {
    async readJob(id) {
      const job = store.jobs.get(id);
      return job === undefined ? null : toJob(job);
    },
    async readDeadLetterJob(id) {
      const row = store.deadLetters.get(id);
      return row === undefined ? null : toDeadLetterJob(row);
    },
    async writeJobStatus(id, status) {
      const job = store.jobs.get(id);
      if (job !== undefined) store.transition(job, status, {}, store.now());
    },
    async backdateWorkerHeartbeat(workerId, byMs) {
      const worker = store.workers.get(workerId);
      if (worker !== undefined) worker.lastHeartbeat -= byMs;
    },
  };
}
