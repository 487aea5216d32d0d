/** The typed events a worker emits (`worker.on(...)`). */

import type { Job } from "../common/types.js";
import type { DeadLetterReason } from "../schema/constants.js";

export interface WorkerEvents {
  "job:start": { job: Job };
  "job:done": { job: Job; result: unknown; durationMs: number };
  "job:failed": { job: Job; error: string; delayMs: number };
  /** `error` is what the row records; for a job claimed past its attempts with no error recorded, why it was moved. */
  "job:dead_letter": { job: Job; reason: DeadLetterReason; error: string };
  "job:snoozed": { job: Job; delayMs: number };
  "job:cancelled": { job: Job; why: "cancelled" | "lost" };
  "job:nacked": { job: Job };
  /** Something failed that the worker survived (a claim, a state write, a heartbeat...). */
  error: { error: unknown; during: string };
  /** A peer declared this worker stale; it re-registered. */
  "worker:stale": { workerId: string };
  stopped: { workerId: string };
}
