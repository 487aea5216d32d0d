/** The `queues` facet: queue controls (pause, resume, limits), the queue list, and the rate window's starts. */

import type { QueueInfo, QueueSettings, RateLimit } from "../common/types.js";
import type { AuditRecord } from "./audit.js";

/**
 * A normalised change to a queue's limits: a key that is `undefined` keeps the stored value, `null` clears
 * it. Values arrive validated (positive integers).
 */
export interface QueueConfigPatch {
  concurrency?: number | null;
  groupConcurrency?: number | null;
  rateLimit?: RateLimit | null;
  /** The lag (ms) past which the queue fires `queue.backlog`. */
  lagAlertMs?: number | null;
}

export interface QueuesFacet {
  /** Mark the queue paused (creating its row), writing `audit` with it. Returns the settings after. */
  pause(name: string, audit: AuditRecord): Promise<QueueSettings>;
  /** Unpause it (a queue without a row stays without limits), writing `audit`; workers are woken. */
  resume(name: string, audit: AuditRecord): Promise<QueueSettings>;
  /** Merge `patch` into the queue's settings (creating the row), writing `audit`. */
  configure(name: string, patch: QueueConfigPatch, audit: AuditRecord): Promise<QueueSettings>;
  /** The queue's settings; a queue without a row reads as unpaused and unlimited. */
  get(name: string): Promise<QueueSettings>;
  /**
   * Every queue with jobs, dead letters or settings, by name, with its stats and lag. `queued` and
   * `processing` are exact. `done`, `cancelled` and `dead_letter` are exact up to `exactCountsUpTo`; a
   * larger one may be an estimate (never below `exactCountsUpTo + 1`), named in the entry's `estimated`.
   */
  list(query: QueueListQuery): Promise<QueueInfo[]>;
  /** Starts recorded for the queue's rate limit within the last `perMs` (by the backend's clock). */
  recentStarts(name: string, perMs: number): Promise<RecentStarts>;
}

export interface QueueListQuery {
  /** Counts up to this many are exact (>= 0; core sends `EXACT_COUNTS_UP_TO`). */
  exactCountsUpTo: number;
}

export interface RecentStarts {
  count: number;
  /** The oldest start in the window, or null. */
  oldestAt: Date | null;
}
