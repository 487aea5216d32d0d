/**
 * The webhooks facet: endpoints and the delivery outbox in memory. Deliveries of events are written by the
 * facet that makes the event (runs, dead letters, schedules) in the same synchronous step, through
 * `writeDeliveries`; each write here appends its audit row in that step too.
 */
import type {
  DeliveryAttemptResult,
  StoredWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryQuery,
  WebhooksFacet,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import type { MemoryStore } from "./internal/store.js";
import { deliveryOf, writeDeliveries } from "./internal/webhook-rows.js";

export function webhooksFacet(store: MemoryStore): WebhooksFacet {
  return {
    createEndpoint: async (endpoint, audit) => {
      const now = new Date(store.now());
      store.webhookEndpoints.set(endpoint.id, copy({ ...endpoint, createdAt: now, updatedAt: now }));
      writeAudit(store, audit);
    },
    updateEndpoint: async (id, patch, audit, guard) => {
      const row = store.webhookEndpoints.get(id);
      if (row === undefined) return null;
      if (guard !== undefined && row.secretCipher !== guard.secretCipher) return null;
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      const next = copy({ ...row, ...defined, updatedAt: new Date(store.now()) });
      store.webhookEndpoints.set(id, next);
      writeAudit(store, audit);
      return copy(next);
    },
    removeEndpoint: async (id, audit) => {
      if (!store.webhookEndpoints.delete(id)) return false;
      for (const [key, d] of store.webhookDeliveries)
        if (d.endpointId === id) store.webhookDeliveries.delete(key);
      writeAudit(store, audit);
      return true;
    },
    getEndpoint: async (id) => {
      const row = store.webhookEndpoints.get(id);
      return row === undefined ? null : copy(row);
    },
    listEndpoints: async () => [...store.webhookEndpoints.values()].map(copy),
    enqueue: async (rows) => writeDeliveries(store, rows),
    listDeliveries: async (query) => list(store, query),
    getDelivery: async (id) => {
      const row = store.webhookDeliveries.get(id);
      return row === undefined ? null : deliveryOf(row);
    },
    claimDue: async ({ limit, leaseMs, perEndpoint = Number.POSITIVE_INFINITY, exceptEndpoints = [] }) => {
      const now = store.now();
      const except = new Set(exceptEndpoints);
      const taken = new Map<string, number>();
      const due = [...store.webhookDeliveries.values()]
        .filter(
          (d) =>
            d.status === "pending" &&
            d.nextAttemptAt !== null &&
            d.nextAttemptAt <= now &&
            !except.has(d.endpointId) &&
            store.webhookEndpoints.get(d.endpointId)?.active === true,
        )
        .sort((a, b) => (a.nextAttemptAt as number) - (b.nextAttemptAt as number))
        .filter((d) => {
          const n = taken.get(d.endpointId) ?? 0;
          taken.set(d.endpointId, n + 1);
          return n < perEndpoint;
        })
        .slice(0, limit);
      for (const d of due) {
        d.attempts++;
        d.nextAttemptAt = now + leaseMs;
        d.updatedAt = now;
      }
      return due.map(deliveryOf);
    },
    recordAttempt: async (result) => record(store, result),
    redeliver: async (id, audit) => {
      const row = store.webhookDeliveries.get(id);
      if (row === undefined || row.status === "pending") return false;
      const now = store.now();
      Object.assign(row, {
        status: "pending",
        attempts: 0,
        nextAttemptAt: now,
        deliveredAt: null,
        updatedAt: now,
      });
      writeAudit(store, audit, now);
      return true;
    },
    prune: async (olderThanMs) => {
      const cutoff = store.now() - olderThanMs;
      let deleted = 0;
      for (const [id, d] of store.webhookDeliveries) {
        if (d.status === "pending" || d.updatedAt >= cutoff) continue;
        store.webhookDeliveries.delete(id);
        deleted++;
      }
      return deleted;
    },
    expirePending: async (olderThanMs, lastError) => {
      const now = store.now();
      let ended = 0;
      for (const d of store.webhookDeliveries.values()) {
        if (d.status !== "pending" || d.createdAt >= now - olderThanMs) continue;
        Object.assign(d, { status: "failed", nextAttemptAt: null, lastError, updatedAt: now });
        ended++;
      }
      return ended;
    },
    countPending: async () => {
      const counts = new Map<string, number>();
      for (const d of store.webhookDeliveries.values()) {
        if (d.status === "pending") counts.set(d.endpointId, (counts.get(d.endpointId) ?? 0) + 1);
      }
      return [...counts].map(([endpointId, pending]) => ({ endpointId, pending }));
    },
  };
}

function record(store: MemoryStore, result: DeliveryAttemptResult): boolean {
  const row = store.webhookDeliveries.get(result.id);
  if (row === undefined || row.status !== "pending" || row.attempts !== result.attempt) return false;
  const now = store.now();
  row.status = result.status;
  row.nextAttemptAt = result.status === "pending" ? now + result.delayMs : null;
  row.deliveredAt = result.status === "delivered" ? now : null;
  row.lastError = result.lastError;
  row.responseStatus = result.responseStatus;
  row.responseBody = result.responseBody;
  row.updatedAt = now;
  return true;
}

function list(store: MemoryStore, query: WebhookDeliveryQuery): WebhookDelivery[] {
  const out: WebhookDelivery[] = [];
  const rows = [...store.webhookDeliveries.values()];
  // Inserted in time order with time-ordered ids: newest first is the map read backwards.
  for (let i = rows.length - 1; i >= 0 && out.length < query.limit; i--) {
    const d = rows[i];
    if (d === undefined) continue;
    if (query.endpointId !== null && d.endpointId !== query.endpointId) continue;
    if (query.status !== null && d.status !== query.status) continue;
    if (query.event !== null && d.event !== query.event) continue;
    out.push(deliveryOf(d));
  }
  return out;
}

function copy(row: StoredWebhookEndpoint): StoredWebhookEndpoint {
  return structuredClone(row);
}
