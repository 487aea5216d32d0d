/** `soniq_queues` rows as core's `QueueSettings`. */
import type { QueueSettings } from "@soniq/core/backend";

export interface QueueRecord {
  name: string;
  paused: number;
  paused_at: number | null;
  concurrency: number | null;
  group_concurrency: number | null;
  rate_max: number | null;
  rate_per_ms: number | null;
  lag_alert_ms: number | null;
  updated_at: number | null;
}

export const QUEUE_COLUMNS =
  "name, paused, paused_at, concurrency, group_concurrency, rate_max, rate_per_ms, lag_alert_ms, updated_at";

export function toQueueSettings(name: string, r: QueueRecord | undefined): QueueSettings {
  return {
    name,
    paused: r?.paused === 1,
    pausedAt: r?.paused_at == null ? null : new Date(r.paused_at),
    concurrency: r?.concurrency ?? null,
    groupConcurrency: r?.group_concurrency ?? null,
    rateLimit:
      r?.rate_max == null || r.rate_per_ms == null ? null : { max: r.rate_max, perMs: r.rate_per_ms },
    lagAlertMs: r?.lag_alert_ms ?? null,
    updatedAt: r?.updated_at == null ? null : new Date(r.updated_at),
  };
}
