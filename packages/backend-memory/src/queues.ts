/**
 * The queues facet: queue controls (`soniq_queues`) and the operator view of every queue. Each action
 * appends its audit row in the same synchronous step. The claim (runs.ts) enforces the settings.
 */
import {
  type AuditRecord,
  type QueueConfigPatch,
  type QueueInfo,
  type QueueSettings,
  type QueuesFacet,
  queueInfo,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import type { MemoryStore } from "./internal/store.js";

export function queuesFacet(store: MemoryStore): QueuesFacet {
  return {
    pause: async (name, audit) =>
      write(store, name, audit, (row, now) => {
        if (!row.paused) row.pausedAt = new Date(now);
        row.paused = true;
      }),
    resume: async (name, audit) => {
      const row = write(store, name, audit, (r) => {
        r.paused = false;
        r.pausedAt = null;
      });
      store.wake(name);
      return row;
    },
    configure: async (name, patch, audit) => {
      const row = write(store, name, audit, (r) => applyPatch(r, patch));
      store.wake(name);
      return row;
    },
    get: async (name) => copy(store.queueSettings.get(name) ?? unlimited(name)),
    list: async () => list(store),
    recentStarts: async (name, perMs) => {
      const from = store.now() - perMs;
      const starts = (store.queueStarts.get(name) ?? []).filter((t) => t > from);
      return { count: starts.length, oldestAt: starts.length > 0 ? new Date(starts[0] as number) : null };
    },
  };
}

function list(store: MemoryStore): QueueInfo[] {
  const names = new Set<string>(store.queueSettings.keys());
  for (const [queue, c] of store.counts) {
    if (c.queued + c.processing + c.done + c.cancelled > 0) names.add(queue);
  }
  for (const [queue, n] of store.deadLetterCounts) if (n > 0) names.add(queue);
  const lag = lagByQueue(store, store.now());
  return [...names].sort().map((name) => {
    const settings = store.queueSettings.get(name) ?? unlimited(name);
    return queueInfo(settings, store.stats(name), lag.get(name) ?? null);
  });
}

function unlimited(name: string): QueueSettings {
  return {
    name,
    paused: false,
    pausedAt: null,
    concurrency: null,
    groupConcurrency: null,
    rateLimit: null,
    lagAlertMs: null,
    updatedAt: null,
  };
}

function write(
  store: MemoryStore,
  name: string,
  audit: AuditRecord,
  change: (row: QueueSettings, now: number) => void,
): QueueSettings {
  const now = store.now();
  const row = { ...(store.queueSettings.get(name) ?? unlimited(name)) };
  change(row, now);
  row.updatedAt = new Date(now);
  store.queueSettings.set(name, row);
  if (row.rateLimit === null) store.queueStarts.delete(name);
  writeAudit(store, audit, now);
  return copy(row);
}

function copy(row: QueueSettings): QueueSettings {
  return { ...row, rateLimit: row.rateLimit && { ...row.rateLimit } };
}

function applyPatch(row: QueueSettings, patch: QueueConfigPatch): void {
  if (patch.concurrency !== undefined) row.concurrency = patch.concurrency;
  if (patch.groupConcurrency !== undefined) row.groupConcurrency = patch.groupConcurrency;
  if (patch.rateLimit !== undefined) row.rateLimit = patch.rateLimit && { ...patch.rateLimit };
  if (patch.lagAlertMs !== undefined) row.lagAlertMs = patch.lagAlertMs;
}

/** Age of the oldest due queued job per queue. */
function lagByQueue(store: MemoryStore, now: number): Map<string, number> {
  const oldest = new Map<string, number>();
  for (const job of store.jobs.values()) {
    if (job.status !== "queued" || job.scheduledAt > now) continue;
    const seen = oldest.get(job.queue);
    if (seen === undefined || job.scheduledAt < seen) oldest.set(job.queue, job.scheduledAt);
  }
  return new Map([...oldest].map(([queue, at]) => [queue, now - at]));
}
