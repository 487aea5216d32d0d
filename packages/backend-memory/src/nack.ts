/**
 * nack: give a claimed job back (shutdown): queued, due now, worker cleared, last_error kept; attempts
 * kept, or given back (attempts - 1) with `refundAttempt` when the job never started.
 */
import type { JobRef, NackOptions } from "@soniq/core";
import { claimedJob } from "./fence.js";
import type { MemoryStore } from "./store.js";

export function nack(store: MemoryStore, ref: JobRef, options?: NackOptions): boolean {
  const job = claimedJob(store, ref);
  if (job === null) return false;
  const now = store.now();
  const attempts = options?.refundAttempt === true ? Math.max(job.attempts - 1, 0) : job.attempts;
  store.transition(job, "queued", { scheduledAt: now, workerId: null, attempts }, now);
  store.wake(job.queue);
  return true;
}
