/** retry: processing -> queued after a failed attempt, with last_error, due after the delay. */
import type { JobRef, RetryOptions } from "@soniq/core";
import { invalidArgument, requireNonNegative } from "./errors.js";
import { claimedJob } from "./fence.js";
import type { MemoryStore } from "./store.js";

export function retry(store: MemoryStore, ref: JobRef, options: RetryOptions): boolean {
  const delayMs = requireNonNegative(options?.delayMs, "delayMs");
  if (typeof options.error !== "string")
    throw invalidArgument("error must be a string.", { error: options.error });
  const job = claimedJob(store, ref);
  if (job === null) return false;
  const now = store.now();
  store.transition(job, "queued", { lastError: options.error, scheduledAt: now + delayMs }, now);
  if (delayMs === 0) store.wake(job.queue);
  return true;
}
