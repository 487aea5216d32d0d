/** getQueueStats from the per-queue counters the store keeps, so it costs O(queues), not O(jobs). */
import type { QueueStats } from "@soniq/core";
import type { MemoryStore, StatusCounts } from "./store.js";

export function getQueueStats(store: MemoryStore, filter: { queue?: string } = {}): QueueStats {
  const stats: QueueStats = { total: 0, queued: 0, processing: 0, done: 0, dead_letter: 0, cancelled: 0 };
  const add = (counts: StatusCounts | undefined, deadLetter: number | undefined) => {
    if (counts !== undefined) {
      stats.queued += counts.queued;
      stats.processing += counts.processing;
      stats.done += counts.done;
      stats.cancelled += counts.cancelled;
    }
    stats.dead_letter += deadLetter ?? 0;
  };
  if (filter.queue !== undefined) {
    add(store.counts.get(filter.queue), store.deadLetterCounts.get(filter.queue));
  } else {
    for (const counts of store.counts.values()) add(counts, 0);
    for (const n of store.deadLetterCounts.values()) add(undefined, n);
  }
  stats.total = stats.queued + stats.processing + stats.done + stats.dead_letter + stats.cancelled;
  return stats;
}
