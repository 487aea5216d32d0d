/**
 * The one job insert of the memory backend, used by `jobs.enqueue(Many)` and a schedule's fired tick.
 * A batch is planned completely before anything is written, so it is all or nothing. Dedup matches
 * queued rows only (the SQL backends' partial unique indexes), including rows earlier in the batch.
 */
import type { EnqueueOptions, EnqueueResult, NewJob } from "@soniq/core/backend";
import { duplicateJobId, transactionUnsupported } from "./errors.js";
import { encodeJson, encodeTrace, type JobRecord, queuedRecord } from "./rows.js";
import { type MemoryStore, uniqueKeyOf } from "./store.js";

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

export function toRecord(store: MemoryStore, job: NewJob, now: number): JobRecord {
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
    traceId: job.traceId,
    traceJson: encodeTrace(job.traceContext),
    seq: store.nextSeq(),
    flowId: job.flowId,
    stepRef: job.stepRef,
    argsVersion: job.argsVersion,
  };
  return queuedRecord(fields, now);
}
