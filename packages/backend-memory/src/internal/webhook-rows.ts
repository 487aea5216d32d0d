/** Webhook rows in memory, and the outbox write the facets that make events share. */
import type { NewWebhookDelivery, WebhookDelivery } from "@soniq/core/backend";
import type { MemoryStore } from "./store.js";

/** A delivery as stored (times in ms). */
export interface DeliveryRecord
  extends Omit<WebhookDelivery, "nextAttemptAt" | "createdAt" | "deliveredAt" | "updatedAt"> {
  nextAttemptAt: number | null;
  createdAt: number;
  deliveredAt: number | null;
  updatedAt: number;
}

/** Inserts deliveries (pending, due now) in the caller's synchronous step; ones whose endpoint is gone are dropped. */
export function writeDeliveries(store: MemoryStore, rows: readonly NewWebhookDelivery[] | undefined): void {
  if (rows === undefined || rows.length === 0) return;
  const now = store.now();
  for (const row of rows) {
    if (!store.webhookEndpoints.has(row.endpointId) || store.webhookDeliveries.has(row.id)) continue;
    store.webhookDeliveries.set(row.id, {
      id: row.id,
      endpointId: row.endpointId,
      event: row.event,
      payload: structuredClone(row.payload),
      status: "pending",
      attempts: 0,
      maxAttempts: row.maxAttempts,
      nextAttemptAt: now,
      lastError: null,
      responseStatus: null,
      responseBody: null,
      createdAt: now,
      deliveredAt: null,
      updatedAt: now,
    });
  }
}

export function deliveryOf(record: DeliveryRecord): WebhookDelivery {
  const at = (ms: number | null) => (ms === null ? null : new Date(ms));
  return {
    ...record,
    payload: structuredClone(record.payload),
    nextAttemptAt: at(record.nextAttemptAt),
    createdAt: new Date(record.createdAt),
    deliveredAt: at(record.deliveredAt),
    updatedAt: new Date(record.updatedAt),
  };
}
