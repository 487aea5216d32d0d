/**
 * The webhook types (DESIGN.md section 18): endpoints (`soniq_webhook_endpoints`) and their deliveries
 * (`soniq_webhook_deliveries`, an outbox written in the same transaction as the event). Re-exported by types.ts.
 */

/**
 * The events the runtime fires. `job.completed` is high volume: an endpoint receives it only when it names
 * it (never through a wildcard). `webhook.test` is what `webhooks.test(id)` sends; it is not subscribable.
 */
export const WEBHOOK_EVENTS = [
  "job.completed",
  "job.failed",
  "job.retried",
  "job.dead_letter",
  "job.resurrected",
  "queue.backlog",
  "schedule.missed",
  "flow.finished",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What a delivery row's `event` holds: a subscribable event, or the test ping. */
export type WebhookDeliveryEvent = WebhookEvent | "webhook.test";

/**
 * A delivery's states: `pending` (due at `nextAttemptAt`, or being attempted), `delivered` (a 2xx answer),
 * `failed` (`maxAttempts` attempts failed; `redeliver` makes it `pending` again with a fresh budget).
 */
export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** The retry shapes an endpoint takes (the jobs' `retry` shapes, minus functions: endpoints are stored). */
export type WebhookRetry =
  | { backoff: "exponential" | "fixed"; delayMs?: number; maxDelayMs?: number; jitter?: boolean }
  | { delaysMs: readonly number[] };

/** A registered endpoint as the API returns it. The secret is never returned: only whether there is one. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The events it receives (at least one). */
  events: WebhookEvent[];
  /** Extra request headers (merged under the `X-Webhook-*` ones, which always win). */
  headers: Record<string, string>;
  description: string | null;
  /**
   * An inactive endpoint gets no new deliveries; its pending ones are parked (not attempted) until it is
   * active again, and `redeliver` refuses its deliveries.
   */
  active: boolean;
  maxAttempts: number;
  timeoutMs: number;
  retry: WebhookRetry;
  /** Always true: a secret is required at registration; it is stored encrypted and never read back. */
  hasSecret: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** The JSON body POSTed to an endpoint (with `redact` applied to what it carries of a job). */
export interface WebhookPayload {
  event: WebhookDeliveryEvent;
  /** ISO 8601, when the event happened. */
  timestamp: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/** One `soniq_webhook_deliveries` row: one event for one endpoint, with its attempts. */
export interface WebhookDelivery {
  /** Stable across retries and redeliveries (the `X-Webhook-Delivery` header). */
  id: string;
  endpointId: string;
  event: WebhookDeliveryEvent;
  payload: WebhookPayload;
  status: WebhookDeliveryStatus;
  attempts: number;
  maxAttempts: number;
  /** When the next attempt is due (pending), else null. */
  nextAttemptAt: Date | null;
  lastError: string | null;
  /** The last answer's HTTP status and body (at most 4 kB), if any. */
  responseStatus: number | null;
  responseBody: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  updatedAt: Date;
}
