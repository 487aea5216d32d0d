/**
 * The jobs facet: enqueue (single and batched), reads, stats, cancel and expiry.
 * A batch is planned completely before anything is written, so it is all or nothing. Dedup matches
 * queued rows only (the SQL backends' partial unique indexes), including rows earlier in the batch.
 */
import type {
  EnqueueOptions,
  EnqueueResult,
  Job,
  JobListQuery,
  JobsFacet,
  NewJob,
  QueueStats,
  StatsQuery,
} from "@soniq/core/backend";
import { appendAudit } from "./audit.js";
import { duplicateJobId, transactionUnsupported } from "./internal/errors.js";
import { encodeJson, type JobRecord, newestFirst, queuedRecord, toJob } from "./internal/rows.js";
import { type MemoryStore, type StatusCounts, uniqueKeyOf } from "./internal/store.js";

export function jobsFacet(store: MemoryStore): JobsFacet<never> {
  return {
    enqueue: async (job, options) => enqueueMany(store, [job], options)[0] as EnqueueResult,
    enqueueMany: async (jobs, options) => enqueueMany(store, jobs, options),
    get: async (id) => {
      const job = store.jobs.get(id);
      return job === undefined ? null : toJob(job);
    },
    list: async (query) => list(store, query),
    stats: async (query) => stats(store, query),
    cancel: async (id, audit) => {
      const job = store.jobs.get(id);
      if (job === undefined || (job.status !== "queued" && job.status !== "processing")) return false;
      store.transition(job, "cancelled", {}, store.now());
      if (audit) appendAudit(store, audit);
      return true;
    },
    deleteExpired: async () => {
      let deleted = 0;
      for (const job of store.takeExpired(store.now())) {
        store.removeJob(job);
        deleted++;
      }
      return deleted;
    },
  };
}

export function enqueueMany(
  store: MemoryStore,
  jobs: readonly NewJob[],
  options: EnqueueOptions<never> | undefined,
): EnqueueResult[] {
  if (options?.tx !== undefined) throw transactionUnsupported();
  const now = store.now();
  const results: EnqueueResult[] = [];
  const inserts: JobRecord[] = [];
  const batchDedup = new Map<string, string>();
  const batchIds = new Set<string>();
  for (const [index, job] of jobs.entries()) {
    const record = toRecord(store, job, now);
    const existing = findDuplicate(store, record, batchDedup);
    if (existing !== null) {
      results.push({ id: existing, deduplicated: true });
      continue;
    }
    if (store.jobs.has(record.id) || batchIds.has(record.id)) throw duplicateJobId(index, record.id);
    batchIds.add(record.id);
    if (record.dedupKey !== null) batchDedup.set(`d:${record.dedupKey}`, record.id);
    const unique = uniqueKeyOf(record);
    if (unique !== null) batchDedup.set(`u:${unique}`, record.id);
    inserts.push(record);
    results.push({ id: record.id, deduplicated: false });
  }
  const queues = new Set<string>();
  for (const record of inserts) {
    store.insertJob(record, now);
    queues.add(record.queue);
  }
  for (const queue of queues) store.wake(queue);
  return results;
}

function findDuplicate(store: MemoryStore, record: JobRecord, batch: Map<string, string>): string | null {
  if (record.dedupKey !== null) {
    const hit = store.dedupKeys.get(record.dedupKey)?.id ?? batch.get(`d:${record.dedupKey}`);
    if (hit !== undefined) return hit;
  }
  const unique = uniqueKeyOf(record);
  if (unique !== null) {
    const hit = store.uniqueKeys.get(unique)?.id ?? batch.get(`u:${unique}`);
    if (hit !== undefined) return hit;
  }
  return null;
}

function toRecord(store: MemoryStore, job: NewJob, now: number): JobRecord {
  const fields = {
    id: job.id,
    jobName: job.jobName,
    argsJson: encodeJson(job.args, "args", true),
    argsHash: job.argsHash,
    maxAttempts: job.maxAttempts,
    queue: job.queue,
    priority: job.priority,
    uniqueJob: job.unique,
    dedupKey: job.dedupKey,
    scheduledAt: job.scheduledAt?.getTime() ?? now,
    producerId: job.producerId,
    group: job.group,
    seq: store.nextSeq(),
  };
  return queuedRecord(fields, now);
}

function list(store: MemoryStore, query: JobListQuery): Job[] {
  const statuses = query.statuses === null ? null : new Set<string>(query.statuses);
  const rows: JobRecord[] = [];
  for (const job of store.jobs.values()) {
    if (statuses !== null && !statuses.has(job.status)) continue;
    if (query.queue !== null && job.queue !== query.queue) continue;
    if (query.jobName !== null && job.jobName !== query.jobName) continue;
    rows.push(job);
  }
  // By id alone (UUIDv7, time-ordered), as the SQL backends read their primary key (core/src/contract/jobs.ts).
  return newestFirst(rows, null, query).map(toJob);
}

/** From the per-queue counters the store keeps, so it costs O(queues), not O(jobs). */
export function stats(store: MemoryStore, query: StatsQuery): QueueStats {
  const out: QueueStats = { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
  const add = (counts: StatusCounts | undefined, deadLetter: number | undefined) => {
    if (counts !== undefined) {
      out.queued += counts.queued;
      out.processing += counts.processing;
      out.done += counts.done;
      out.cancelled += counts.cancelled;
    }
    out.dead_letter += deadLetter ?? 0;
  };
  if (query.queue !== null) {
    add(store.counts.get(query.queue), store.deadLetterCounts.get(query.queue));
  } else {
    for (const counts of store.counts.values()) add(counts, 0);
    for (const n of store.deadLetterCounts.values()) add(undefined, n);
  }
  out.total = out.queued + out.processing + out.done + out.dead_letter + out.cancelled;
  return out;
}
