/** `soniq_queues` rows as core's `QueueSettings`. */
import type { QueueSettings } from "@soniq/core/backend";
import { type Row, toDate } from "./rows.js";

export const QUEUE_COLUMNS =
  "name, paused, paused_at, concurrency, group_concurrency, rate_max, rate_per_ms, lag_alert_ms, updated_at";

const intOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function toQueueSettings(name: string, r: Row | undefined): QueueSettings {
  const rateMax = intOrNull(r?.rate_max);
  const perMs = intOrNull(r?.rate_per_ms);
  return {
    name,
    paused: r?.paused === true,
    pausedAt: r?.paused_at == null ? null : toDate(r.paused_at),
    concurrency: intOrNull(r?.concurrency),
    groupConcurrency: intOrNull(r?.group_concurrency),
    rateLimit: rateMax === null || perMs === null ? null : { max: rateMax, perMs },
    lagAlertMs: intOrNull(r?.lag_alert_ms),
    updatedAt: r?.updated_at == null ? null : toDate(r.updated_at),
  };
}
