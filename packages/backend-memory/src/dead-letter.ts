/**
 * markJobDeadLetter: the move from soniq_jobs to soniq_dead_letter_jobs. Two steps (insert the
 * dead-letter row, delete the job) that either both happen or neither: a failure between them
 * (the test hook) removes the inserted row again, as a rolled-back transaction would.
 */
import type { DeadLetterItem, DeadLetterOptions } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { invalidArgument, requireString } from "./errors.js";
import { claimedJob } from "./fence.js";
import { type DeadLetterRecord, encodeJson, type JobRecord } from "./rows.js";
import type { MemoryStore } from "./store.js";

export interface DeadLetterMove {
  reason: string;
  error: string | null;
  tags: Record<string, unknown> | null;
}

export function markJobDeadLetter(store: MemoryStore, id: string, options: DeadLetterOptions): boolean {
  const reason = requireString(options?.reason, "reason");
  if (options.error !== null && typeof options.error !== "string") {
    throw invalidArgument("error must be a string or null.", { error: options.error });
  }
  if (options.tags != null && (typeof options.tags !== "object" || Array.isArray(options.tags))) {
    throw invalidArgument("tags must be an object or null.", { tags: options.tags });
  }
  const job = store.jobs.get(id);
  if (job === undefined || (job.status !== "queued" && job.status !== "processing")) return false;
  if (options.attempt !== undefined && (job.status !== "processing" || job.attempts !== options.attempt)) {
    return false;
  }
  assertNoDeadLetterRow(store, id);
  const tags = options.tags ?? null;
  moveToDeadLetter(store, job, { reason, error: options.error, tags }, store.hooks.afterDeadLetterInsert);
  return true;
}

export function assertNoDeadLetterRow(store: MemoryStore, id: string): void {
  if (store.deadLetters.has(id)) {
    throw new SoniqError(
      "SONIQ_DEAD_LETTER_CONFLICT",
      `soniq_dead_letter_jobs already holds a row with id ${id}; the job was left in soniq_jobs. Purge or inspect that row first.`,
      { context: { id } },
    );
  }
}

function deadLetterRow(store: MemoryStore, job: JobRecord, move: DeadLetterMove): DeadLetterRecord {
  const now = store.now();
  return {
    id: job.id,
    jobName: job.jobName,
    argsJson: job.argsJson,
    queue: job.queue,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    attempts: job.attempts,
    lastError: move.error,
    deadLetterReason: move.reason,
    tagsJson: move.tags === null ? null : encodeJson(move.tags, "tags"),
    resurrectionCount: 0,
    lastResurrectionAt: null,
    originalCreatedAt: job.createdAt,
    movedToDeadLetterAt: now,
    createdAt: now,
    seq: store.nextSeq(),
  };
}

/** Both steps of the move. The caller checked there is no dead-letter row with this id. */
export function moveToDeadLetter(
  store: MemoryStore,
  job: JobRecord,
  move: DeadLetterMove,
  betweenSteps?: (jobId: string) => void,
  popped = false,
): void {
  const row = deadLetterRow(store, job, move);
  store.addDeadLetter(row);
  try {
    betweenSteps?.(job.id);
  } catch (cause) {
    store.removeDeadLetter(row);
    throw new SoniqError(
      "SONIQ_BACKEND_ERROR",
      `Moving job ${job.id} to the dead-letter table failed; nothing was moved.`,
      { context: { id: job.id }, cause },
    );
  }
  store.removeJob(job, popped);
}

/**
 * markJobsDeadLetter: the worker's batched moves in one synchronous step (nothing else runs in between).
 * Items not processing under their attempt, repeated ids, and ids that already have a dead-letter row are
 * skipped. The moves run as the SQL backends' single transaction would: every dead-letter row is inserted,
 * then every job deleted; a failure between the steps (the test hook) removes the inserted rows again, so
 * nothing of the batch moved.
 */
export function markJobsDeadLetter(store: MemoryStore, items: readonly DeadLetterItem[]): string[] {
  if (!Array.isArray(items)) throw invalidArgument("items must be an array.", { items });
  const picked: { job: JobRecord; move: DeadLetterMove }[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const reason = requireString(item?.reason, "reason");
    const job = claimedJob(store, item);
    if (job === null || seen.has(job.id) || store.deadLetters.has(job.id)) continue;
    seen.add(job.id);
    picked.push({ job, move: { reason, error: item.error ?? null, tags: item.tags ?? null } });
  }
  const inserted = picked.map(({ job, move }) => deadLetterRow(store, job, move));
  for (const row of inserted) store.addDeadLetter(row);
  try {
    for (const { job } of picked) store.hooks.afterDeadLetterInsert?.(job.id);
  } catch (cause) {
    for (const row of inserted) store.removeDeadLetter(row);
    throw new SoniqError("SONIQ_BACKEND_ERROR", "A batched dead-letter move failed; nothing was moved.", {
      context: { ids: picked.map(({ job }) => job.id) },
      cause,
    });
  }
  for (const { job } of picked) store.removeJob(job);
  return picked.map(({ job }) => job.id);
}
