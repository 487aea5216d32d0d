/** reschedule (snooze): queued after the delay without spending the attempt the claim counted. */
import type { JobRef, RescheduleOptions } from "@soniq/core";
import { invalidArgument, requireNonNegative } from "./errors.js";
import { claimedJob } from "./fence.js";
import type { MemoryStore } from "./store.js";

export function reschedule(store: MemoryStore, ref: JobRef, options: RescheduleOptions): boolean {
  const delayMs = requireNonNegative(options?.delayMs, "delayMs");
  const reason = options.reason ?? null;
  if (reason !== null && typeof reason !== "string") {
    throw invalidArgument("reason must be a string or null.", { reason });
  }
  const job = claimedJob(store, ref);
  if (job === null) return false;
  const now = store.now();
  store.transition(
    job,
    "queued",
    {
      attempts: Math.max(0, job.attempts - 1),
      scheduledAt: now + delayMs,
      lastError: reason === null || reason === "" ? "SNOOZE" : `SNOOZE: ${reason}`,
    },
    now,
  );
  if (delayMs === 0) store.wake(job.queue);
  return true;
}
