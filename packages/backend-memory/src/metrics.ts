/** The metrics facet: `soniq_metrics` per-minute counters in memory. */
import type { MetricsFacet, MetricsRow } from "@soniq/core/backend";
import type { MemoryStore } from "./internal/store.js";

export function metricsFacet(store: MemoryStore): MetricsFacet {
  return {
    record: async (rows) => {
      for (const row of rows) {
        const stored = store.metrics.get(keyOf(row));
        if (stored === undefined)
          store.metrics.set(keyOf(row), { ...row, bucketStart: new Date(row.bucketStart) });
        else for (const k of COUNTS) stored[k] += row[k];
      }
    },
    list: async ({ since, queue }) =>
      [...store.metrics.values()]
        .filter((r) => r.bucketStart >= since && (queue === null || r.queue === queue))
        .sort((a, b) => a.bucketStart.getTime() - b.bucketStart.getTime())
        .map((r) => ({ ...r, bucketStart: new Date(r.bucketStart) })),
    prune: async (olderThanMs) => {
      const before = store.now() - olderThanMs;
      let n = 0;
      for (const [key, r] of store.metrics) {
        if (r.bucketStart.getTime() < before) {
          store.metrics.delete(key);
          n++;
        }
      }
      return n;
    },
  };
}

const COUNTS = ["done", "failed", "retried", "deadLettered", "snoozed", "runMsSum"] as const;
const keyOf = (r: MetricsRow) => `${r.bucketStart.getTime()}\u0000${r.queue}\u0000${r.jobName}`;
