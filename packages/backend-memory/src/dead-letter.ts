/**
 * markJobDeadLetter: the move from soniq_jobs to soniq_dead_letter_jobs. Two steps (insert the
 * dead-letter row, delete the job) that either both happen or neither: a failure between them
 * (the test hook) removes the inserted row again, as a rolled-back transaction would.
 */
import type { DeadLetterOptions } from "@soniq/core";
import { SoniqError } from "@soniq/core";
import { invalidArgument, requireString } from "./errors.js";
import { encodeJson, type JobRecord } from "./rows.js";
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

/** Both steps of the move. The caller checked there is no dead-letter row with this id. */
export function moveToDeadLetter(
  store: MemoryStore,
  job: JobRecord,
  move: DeadLetterMove,
  betweenSteps?: (jobId: string) => void,
  popped = false,
): void {
  const now = store.now();
  const row = {
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
