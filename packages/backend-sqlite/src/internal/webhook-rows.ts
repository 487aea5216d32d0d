/** `soniq_webhook_*` rows as core's types, and the outbox insert the facets that make events share. */
import type {
  NewWebhookDelivery,
  StoredWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryStatus,
} from "@soniq/core/backend";
import type { SqliteContext } from "./context.js";
import { NOW } from "./sql.js";

export const ENDPOINT_COLUMNS =
  "id, url, secret, events, headers, description, active, max_attempts, timeout_ms, retry, created_at, updated_at";
export const DELIVERY_COLUMNS =
  "id, endpoint_id, event, payload, status, attempts, max_attempts, next_retry_at, last_error, response_status, response_body, created_at, delivered_at, updated_at";

export interface EndpointRecord {
  id: string;
  url: string;
  secret: string;
  events: string;
  headers: string;
  description: string | null;
  active: number;
  max_attempts: number;
  timeout_ms: number;
  retry: string;
  created_at: number;
  updated_at: number;
}

export interface DeliveryRecord {
  id: string;
  endpoint_id: string;
  event: string;
  payload: string;
  status: string;
  attempts: number;
  max_attempts: number;
  next_retry_at: number | null;
  last_error: string | null;
  response_status: number | null;
  response_body: string | null;
  created_at: number;
  delivered_at: number | null;
  updated_at: number;
}

export function toEndpoint(r: EndpointRecord): StoredWebhookEndpoint {
  return {
    id: r.id,
    url: r.url,
    secretCipher: r.secret,
    events: JSON.parse(r.events),
    headers: JSON.parse(r.headers),
    description: r.description,
    active: r.active === 1,
    maxAttempts: r.max_attempts,
    timeoutMs: r.timeout_ms,
    retry: JSON.parse(r.retry),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

export function toDelivery(r: DeliveryRecord): WebhookDelivery {
  const at = (ms: number | null) => (ms === null ? null : new Date(ms));
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    event: r.event as WebhookDelivery["event"],
    payload: JSON.parse(r.payload),
    status: r.status as WebhookDeliveryStatus,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    nextAttemptAt: at(r.next_retry_at),
    lastError: r.last_error,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    createdAt: new Date(r.created_at),
    deliveredAt: at(r.delivered_at),
    updatedAt: new Date(r.updated_at),
  };
}

// A delivery whose endpoint was removed meanwhile is dropped (the event has nowhere to go), as the
// foreign key's cascade would have removed it.
const INSERT_DELIVERY = `INSERT INTO soniq_webhook_deliveries
  (id, endpoint_id, event, payload, status, attempts, max_attempts, next_retry_at, created_at, updated_at)
  SELECT @id, @endpointId, @event, @payload, 'pending', 0, @maxAttempts, ${NOW}, ${NOW}, ${NOW}
  WHERE EXISTS (SELECT 1 FROM soniq_webhook_endpoints WHERE id = @endpointId)
  ON CONFLICT (id) DO NOTHING`;

/** Inserts deliveries inside the caller's transaction (the event's own). */
export function writeDeliveries(ctx: SqliteContext, rows: readonly NewWebhookDelivery[] | undefined): void {
  if (rows === undefined || rows.length === 0) return;
  const insert = ctx.statement(INSERT_DELIVERY);
  for (const row of rows) {
    insert.run({
      id: row.id,
      endpointId: row.endpointId,
      event: row.event,
      payload: JSON.stringify(row.payload),
      maxAttempts: row.maxAttempts,
    });
  }
}
