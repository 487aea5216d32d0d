/** nack: give a claimed job back untouched (shutdown): queued, due now, attempts and last_error kept. */
import type { JobRef } from "@soniq/core";
import { claimedJob } from "./fence.js";
import type { MemoryStore } from "./store.js";

export function nack(store: MemoryStore, ref: JobRef): boolean {
  const job = claimedJob(store, ref);
  if (job === null) return false;
  const now = store.now();
  store.transition(job, "queued", { scheduledAt: now, workerId: null }, now);
  store.wake(job.queue);
  return true;
}
