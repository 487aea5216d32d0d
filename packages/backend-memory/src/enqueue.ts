/**
 * enqueue / enqueueMany. A batch is validated and planned completely before anything is written,
 * so it is all or nothing. Dedup matches queued rows only (the SQL backends' partial unique indexes),
 * including rows earlier in the same batch.
 */
import type { EnqueueOptions, EnqueueResult, NewJob } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { invalidArgument, optionalTime, requireString } from "./errors.js";
import { encodeJson, type JobRecord } from "./rows.js";
import { type MemoryStore, uniqueKeyOf } from "./store.js";

export function enqueue(store: MemoryStore, job: NewJob, options?: EnqueueOptions<unknown>): EnqueueResult {
  const [result] = enqueueMany(store, [job], options);
  return result as EnqueueResult;
}

export function enqueueMany(
  store: MemoryStore,
  jobs: readonly NewJob[],
  options?: EnqueueOptions<unknown>,
): EnqueueResult[] {
  if (options?.tx !== undefined) {
    throw new SoniqError(
      "SONIQ_TRANSACTION_UNSUPPORTED",
      "The memory backend cannot enqueue inside a caller's transaction: omit `tx`, or use the Postgres or SQLite backend.",
      { context: { backend: "memory" } },
    );
  }
  if (!Array.isArray(jobs)) throw invalidArgument("enqueueMany expects an array of jobs.");
  const now = store.now();
  const records = jobs.map((job, index) => toRecord(store, job, index, now));
  const results: EnqueueResult[] = [];
  const inserts: JobRecord[] = [];
  const batchDedup = new Map<string, string>();
  const batchIds = new Set<string>();
  for (const [index, record] of records.entries()) {
    const existing = findDuplicate(store, record, batchDedup);
    if (existing !== null) {
      results.push({ id: existing, deduplicated: true });
      continue;
    }
    if (store.jobs.has(record.id) || batchIds.has(record.id)) {
      throw invalidArgument(`Job ${index}: a job with id ${record.id} already exists.`, {
        index,
        id: record.id,
      });
    }
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

function toRecord(store: MemoryStore, job: NewJob, index: number, now: number): JobRecord {
  if (typeof job !== "object" || job === null)
    throw invalidArgument(`Job ${index} is not an object.`, { index });
  const at = (name: string) => `Job ${index}: ${name}`;
  const id = requireString(job.id, at("id"));
  const jobName = requireString(job.jobName, at("jobName"));
  const queue = requireString(job.queue, at("queue"));
  if (!Number.isSafeInteger(job.priority))
    throw invalidArgument(`${at("priority")} must be an integer.`, { index });
  if (!Number.isSafeInteger(job.maxAttempts) || job.maxAttempts < 1) {
    throw invalidArgument(`${at("maxAttempts")} must be an integer >= 1.`, { index });
  }
  if (job.unique && typeof job.argsHash !== "string") {
    throw invalidArgument(`${at("argsHash")} is required for a unique job.`, { index });
  }
  if (job.args === undefined) {
    throw new SoniqError("SONIQ_TASK_ARGS_INVALID", `${at("args")} is undefined; pass JSON.`, {
      context: { index },
    });
  }
  const scheduledAt = optionalTime(job.scheduledAt, at("scheduledAt")) ?? now;
  return {
    id,
    jobName,
    argsJson: encodeJson(job.args, at("args"), true),
    argsHash: job.argsHash ?? null,
    status: "queued",
    attempts: 0,
    maxAttempts: job.maxAttempts,
    queue,
    priority: job.priority,
    uniqueJob: job.unique === true,
    dedupKey: job.dedupKey ?? null,
    scheduledAt,
    expiresAt: null,
    lastError: null,
    resultJson: null,
    producerId: job.producerId ?? null,
    workerId: null,
    createdAt: now,
    updatedAt: now,
    seq: store.nextSeq(),
    queuedVersion: 0,
    live: true,
  };
}
