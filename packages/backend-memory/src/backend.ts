/**
 * memoryBackend(): the whole Backend contract in process, with the semantics of the SQL backends.
 * Each method delegates to the file named after it; this file only wires them to one store.
 */
import type { Backend, BackendCapabilities } from "@soniq/core";
import { cancel } from "./cancel.js";
import { claim } from "./claim.js";
import { complete } from "./complete.js";
import { markJobDeadLetter, markJobsDeadLetter } from "./dead-letter.js";
import { getDeadLetterJob, listDeadLetterJobs, purgeDeadLetterJob } from "./dead-letter-jobs.js";
import { enqueue, enqueueMany } from "./enqueue.js";
import { deleteExpiredJobs } from "./expiry.js";
import { createInspector, type MemoryInspector } from "./inspector.js";
import { getJob, listJobs } from "./jobs.js";
import { releaseLease, tryAcquireLease } from "./leases.js";
import { nack } from "./nack.js";
import { type MemoryBackendOptions, resolveOptions } from "./options.js";
import { replayDeadLetterJob } from "./replay.js";
import { reschedule } from "./reschedule.js";
import { retry } from "./retry.js";
import { getQueueStats } from "./stats.js";
import { MemoryStore } from "./store.js";
import { subscribe } from "./subscribe.js";
import { listTaskNames, registerTaskNames } from "./task-names.js";
import { heartbeat, listWorkers, recoverStaleWorkers, registerWorker, stopWorker } from "./workers.js";

export interface MemoryBackend extends Backend<never> {
  /** Raw state access for tests (the testkit's inspector). Not part of the Backend contract. */
  inspector(): MemoryInspector;
}

const CAPABILITIES: BackendCapabilities = Object.freeze({
  notify: false,
  transactionalEnqueue: false,
  advisoryLocks: false,
  multiProcess: false,
});

export function memoryBackend(options?: MemoryBackendOptions): MemoryBackend {
  const resolved = resolveOptions(options);
  const store = new MemoryStore(resolved.now, resolved.testHooks);
  let closing: Promise<void> | undefined;
  return {
    name: resolved.name,
    capabilities: CAPABILITIES,
    migrate: async () => ({ applied: [], pending: [], appliedNow: [] }),
    // No schema: there is never anything to apply.
    migrationStatus: async () => ({ applied: [], pending: [] }),
    enqueue: async (job, opts) => enqueue(store, job, opts),
    enqueueMany: async (jobs, opts) => enqueueMany(store, jobs, opts),
    claim: async (request) => claim(store, request),
    complete: async (items) => complete(store, items),
    retry: async (ref, opts) => retry(store, ref, opts),
    nack: async (ref, opts) => nack(store, ref, opts),
    reschedule: async (ref, opts) => reschedule(store, ref, opts),
    markJobDeadLetter: async (id, opts) => markJobDeadLetter(store, id, opts),
    markJobsDeadLetter: async (items) => markJobsDeadLetter(store, items),
    cancel: async (id) => cancel(store, id),
    getJob: async (id) => getJob(store, id),
    listJobs: async (filter) => listJobs(store, filter),
    getQueueStats: async (filter) => getQueueStats(store, filter),
    listDeadLetterJobs: async (filter) => listDeadLetterJobs(store, filter),
    getDeadLetterJob: async (id) => getDeadLetterJob(store, id),
    replayDeadLetterJob: async (id, opts) => replayDeadLetterJob(store, id, opts),
    purgeDeadLetterJob: async (id) => purgeDeadLetterJob(store, id),
    registerWorker: async (worker) => registerWorker(store, worker),
    heartbeat: async (workerId, metadata) => heartbeat(store, workerId, metadata),
    stopWorker: async (workerId) => stopWorker(store, workerId),
    listWorkers: async () => listWorkers(store),
    recoverStaleWorkers: async (staleAfterMs) => recoverStaleWorkers(store, staleAfterMs),
    deleteExpiredJobs: async () => deleteExpiredJobs(store),
    registerTaskNames: async (workerId, names) => registerTaskNames(store, workerId, names),
    listTaskNames: async () => listTaskNames(store),
    subscribe: async (listener) => subscribe(store, listener),
    tryAcquireLease: async (name, holder, ttlMs) => tryAcquireLease(store, name, holder, ttlMs),
    releaseLease: async (name, holder) => releaseLease(store, name, holder),
    inspector: () => createInspector(store),
    close: () => {
      // Nothing to release but the listeners; the data stays readable through inspector().
      closing ??= Promise.resolve().then(() => store.listeners.clear());
      return closing;
    },
  };
}
