/**
 * `soniq_webhook_*` rows as core's types, and the outbox insert: a CTE that writes an event's deliveries
 * in the statement (or transaction) that makes the event, so they commit together. A delivery whose endpoint
 * was removed meanwhile is dropped (it has nowhere to go), as the foreign key's cascade would have removed it.
 */
import type {
  NewWebhookDelivery,
  StoredWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryStatus,
} from "@soniq/core/backend";
import type pg from "pg";
import { type Row, toDate } from "./rows.js";

export const ENDPOINT_COLUMNS =
  "id::text, url, secret, events, headers, description, active, max_attempts, timeout_ms, retry, created_at, updated_at";
export const DELIVERY_COLUMNS =
  "id::text, endpoint_id::text, event, payload, status, attempts, max_attempts, next_retry_at, last_error, response_status, response_body, created_at, delivered_at, updated_at";

const dateOrNull = (v: unknown) => (v === null || v === undefined ? null : toDate(v));

export function toEndpoint(r: Row): StoredWebhookEndpoint {
  return {
    id: String(r.id),
    url: String(r.url),
    secretCipher: String(r.secret),
    events: r.events as StoredWebhookEndpoint["events"],
    headers: r.headers as Record<string, string>,
    description: (r.description as string | null) ?? null,
    active: r.active === true,
    maxAttempts: Number(r.max_attempts),
    timeoutMs: Number(r.timeout_ms),
    retry: r.retry as StoredWebhookEndpoint["retry"],
    createdAt: toDate(r.created_at),
    updatedAt: toDate(r.updated_at),
  };
}

export function toDelivery(r: Row): WebhookDelivery {
  return {
    id: String(r.id),
    endpointId: String(r.endpoint_id),
    event: r.event as WebhookDelivery["event"],
    payload: r.payload as WebhookDelivery["payload"],
    status: r.status as WebhookDeliveryStatus,
    attempts: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    nextAttemptAt: dateOrNull(r.next_retry_at),
    lastError: (r.last_error as string | null) ?? null,
    responseStatus: r.response_status === null ? null : Number(r.response_status),
    responseBody: (r.response_body as string | null) ?? null,
    createdAt: toDate(r.created_at),
    deliveredAt: dateOrNull(r.delivered_at),
    updatedAt: toDate(r.updated_at),
  };
}

/** The deliveries as the outbox CTE's parameter; `owner` ties each to the settle item that makes it. */
export function deliveriesParam(rows: readonly (NewWebhookDelivery & { owner?: string })[]): string {
  return JSON.stringify(
    rows.map((d) => ({
      id: d.id,
      owner: d.owner ?? null,
      endpoint_id: d.endpointId,
      event: d.event,
      payload: d.payload,
      max_attempts: d.maxAttempts,
    })),
  );
}

/**
 * A CTE (`outbox`) inserting the deliveries of parameter `param` that satisfy `condition` (SQL over `d`, the
 * delivery record: e.g. its owner among the rows an earlier CTE wrote), due now.
 */
export function outboxCte(param: string, condition = "true"): string {
  return `outbox AS (
  INSERT INTO soniq_webhook_deliveries (id, endpoint_id, event, payload, max_attempts, next_retry_at)
  SELECT d.id, d.endpoint_id, d.event, d.payload, d.max_attempts, now()
  FROM jsonb_to_recordset(${param}::jsonb)
    AS d(id uuid, owner text, endpoint_id uuid, event text, payload jsonb, max_attempts int)
  WHERE EXISTS (SELECT 1 FROM soniq_webhook_endpoints e WHERE e.id = d.endpoint_id) AND (${condition})
  ON CONFLICT (id) DO NOTHING)`;
}

const WRITE = `WITH ${outboxCte("$1")} SELECT 1`;

/** Inserts deliveries on `client` (inside the event's transaction). */
export async function writeDeliveries(
  client: pg.ClientBase | pg.Pool,
  rows: readonly NewWebhookDelivery[] | undefined,
): Promise<void> {
  if (rows === undefined || rows.length === 0) return;
  await client.query(WRITE, [deliveriesParam(rows)]);
}
