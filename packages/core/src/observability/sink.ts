/**
 * Metrics: the worker reports job starts and ends to a `MetricsSink`. The default sink does nothing;
 * `@soniq/prometheus` ships one on prom-client. A sink that throws (or rejects) is logged and
 * ignored: metrics never break the worker loop.
 */
import type { DeadLetterReason } from "../schema/constants.js";

export interface JobStartEvent {
  jobId: string;
  jobName: string;
  queue: string;
  attempt: number;
}

/**
 * How a run ended. `done`, `failed` (will retry), `dead_letter`, `snoozed` as in DESIGN.md; also
 * `cancelled` (the job was cancelled while running) and `nacked` (given back at shutdown, attempt preserved).
 */
export type JobEndStatus = "done" | "failed" | "dead_letter" | "snoozed" | "cancelled" | "nacked";

export interface JobEndEvent extends JobStartEvent {
  status: JobEndStatus;
  /** Handler run time (ms), from start to outcome. */
  durationMs: number;
  /** The error text for failed and dead-lettered runs. */
  error?: string;
  /** For `dead_letter`. */
  reason?: DeadLetterReason;
}

export interface ClaimEvent {
  /** Jobs returned by one claim call. */
  count: number;
  durationMs: number;
}

/**
 * The webhook outbox's pending deliveries (`recordWebhookPending`), reported by each worker at its maintenance
 * cadence: the worker holding the maintenance lease lists every endpoint it knows with its count (0 included);
 * every other worker reports an empty list, so a gauge summed over processes counts each delivery once.
 */
export interface WebhookPendingEvent {
  endpoints: { endpointId: string; pending: number }[];
}

export interface MetricsSink {
  recordJobStart(event: JobStartEvent): void | Promise<void>;
  recordJobEnd(event: JobEndEvent): void | Promise<void>;
  /** Optional: one call per claim round trip. */
  recordClaim?(event: ClaimEvent): void | Promise<void>;
  /** Optional: other runtime events (`shutdown_nack`, `worker_stale`, `write_failed`). */
  recordEvent?(name: string, payload: Record<string, unknown>): void | Promise<void>;
  /**
   * Optional: the webhook outbox's pending deliveries per endpoint, at each worker's maintenance pass (counted
   * only when the sink has this method). See `WebhookPendingEvent`.
   */
  recordWebhookPending?(event: WebhookPendingEvent): void | Promise<void>;
}

export const noopMetricsSink: MetricsSink = Object.freeze({
  recordJobStart() {},
  recordJobEnd() {},
});

export function isMetricsSink(value: unknown): value is MetricsSink {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.recordJobStart === "function" && typeof v.recordJobEnd === "function";
}
