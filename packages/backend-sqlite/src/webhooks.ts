/**
 * The webhooks facet: endpoints and the delivery outbox (`soniq_webhook_endpoints`,
 * `soniq_webhook_deliveries`). Each write with an audit record commits it in the same IMMEDIATE
 * transaction. Deliveries of events are inserted by the facet that makes the event, in its transaction
 * (internal/webhook-rows.ts). A claim is one IMMEDIATE transaction, so two processes never take the same
 * delivery.
 */
import type {
  AuditRecord,
  DeliveryAttemptResult,
  StoredWebhookEndpoint,
  WebhookDeliveryQuery,
  WebhookEndpointPatch,
  WebhooksFacet,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { NOW } from "./internal/sql.js";
import {
  DELIVERY_COLUMNS,
  type DeliveryRecord,
  ENDPOINT_COLUMNS,
  type EndpointRecord,
  toDelivery,
  toEndpoint,
  writeDeliveries,
} from "./internal/webhook-rows.js";

const INSERT_ENDPOINT = `INSERT INTO soniq_webhook_endpoints (${ENDPOINT_COLUMNS})
  VALUES (@id, @url, @secret, @events, @headers, @description, @active, @maxAttempts, @timeoutMs, @retry, ${NOW}, ${NOW})`;
const GET_ENDPOINT = `SELECT ${ENDPOINT_COLUMNS} FROM soniq_webhook_endpoints WHERE id = ?`;
const LIST_ENDPOINTS = `SELECT ${ENDPOINT_COLUMNS} FROM soniq_webhook_endpoints ORDER BY created_at, id`;
const UPDATE_ENDPOINT = `UPDATE soniq_webhook_endpoints SET
    url = COALESCE(@url, url), secret = COALESCE(@secret, secret), events = COALESCE(@events, events),
    headers = COALESCE(@headers, headers),
    description = CASE WHEN @setDescription THEN @description ELSE description END,
    active = COALESCE(@active, active), max_attempts = COALESCE(@maxAttempts, max_attempts),
    timeout_ms = COALESCE(@timeoutMs, timeout_ms), retry = COALESCE(@retry, retry), updated_at = ${NOW}
  WHERE id = @id AND (@ifSecret IS NULL OR secret = @ifSecret)`;
const DELETE_ENDPOINT = "DELETE FROM soniq_webhook_endpoints WHERE id = ?";
const DELETE_DELIVERIES = "DELETE FROM soniq_webhook_deliveries WHERE endpoint_id = ?";
const GET_DELIVERY = `SELECT ${DELIVERY_COLUMNS} FROM soniq_webhook_deliveries WHERE id = ?`;
const LIST_DELIVERIES = `SELECT ${DELIVERY_COLUMNS} FROM soniq_webhook_deliveries
  WHERE (@endpointId IS NULL OR endpoint_id = @endpointId) AND (@status IS NULL OR status = @status)
    AND (@event IS NULL OR event = @event)
  ORDER BY created_at DESC, id DESC LIMIT @limit`;
const CLAIM = `UPDATE soniq_webhook_deliveries
  SET attempts = attempts + 1, next_retry_at = ${NOW} + @leaseMs, updated_at = ${NOW}
  WHERE id IN (SELECT id FROM (
      SELECT d.id, d.next_retry_at,
        row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_retry_at, d.id) AS nth
      FROM soniq_webhook_deliveries d JOIN soniq_webhook_endpoints e ON e.id = d.endpoint_id AND e.active = 1
      WHERE d.status = 'pending' AND d.next_retry_at <= ${NOW}
        AND d.endpoint_id NOT IN (SELECT value FROM json_each(@except)))
    WHERE nth <= @perEndpoint ORDER BY next_retry_at, id LIMIT @limit)
  RETURNING ${DELIVERY_COLUMNS}`;
const RECORD = `UPDATE soniq_webhook_deliveries SET status = @status,
    next_retry_at = CASE WHEN @status = 'pending' THEN ${NOW} + @delayMs ELSE NULL END,
    delivered_at = CASE WHEN @status = 'delivered' THEN ${NOW} ELSE NULL END,
    last_error = @lastError, response_status = @responseStatus, response_body = @responseBody,
    updated_at = ${NOW}
  WHERE id = @id AND status = 'pending' AND attempts = @attempt`;
const REDELIVER = `UPDATE soniq_webhook_deliveries SET status = 'pending', attempts = 0,
    next_retry_at = ${NOW}, delivered_at = NULL, updated_at = ${NOW}
  WHERE id = ? AND status <> 'pending'`;

// The created_at index finds the candidates: a row last written before the cutoff was created before it.
const PRUNE = `DELETE FROM soniq_webhook_deliveries
  WHERE created_at < ${NOW} - @olderThanMs AND updated_at < ${NOW} - @olderThanMs AND status <> 'pending'`;
const EXPIRE_PENDING = `UPDATE soniq_webhook_deliveries
  SET status = 'failed', next_retry_at = NULL, last_error = @lastError, updated_at = ${NOW}
  WHERE status = 'pending' AND created_at < ${NOW} - @olderThanMs`;
const COUNT_PENDING = `SELECT endpoint_id AS endpointId, count(*) AS pending FROM soniq_webhook_deliveries
  WHERE status = 'pending' GROUP BY endpoint_id`;

export function webhooksFacet(ctx: SqliteContext): WebhooksFacet {
  return {
    createEndpoint: (endpoint, audit) =>
      runSync("webhooks.createEndpoint", () =>
        immediate(ctx, () => {
          ctx.statement(INSERT_ENDPOINT).run(endpointParams(endpoint));
          writeAudit(ctx, audit);
        }),
      ),
    updateEndpoint: (id, patch, audit, guard) =>
      runSync("webhooks.updateEndpoint", () =>
        immediate(ctx, () => update(ctx, id, patch, audit, guard?.secretCipher ?? null)),
      ),
    removeEndpoint: (id, audit) =>
      runSync("webhooks.removeEndpoint", () =>
        immediate(ctx, () => {
          ctx.statement(DELETE_DELIVERIES).run(id);
          const removed = ctx.statement(DELETE_ENDPOINT).run(id).changes > 0;
          if (removed) writeAudit(ctx, audit);
          return removed;
        }),
      ),
    getEndpoint: (id) =>
      runSync("webhooks.getEndpoint", () => {
        const row = ctx.statement(GET_ENDPOINT).get(id) as EndpointRecord | undefined;
        return row === undefined ? null : toEndpoint(row);
      }),
    listEndpoints: () =>
      runSync("webhooks.listEndpoints", () =>
        (ctx.statement(LIST_ENDPOINTS).all() as EndpointRecord[]).map(toEndpoint),
      ),
    enqueue: (rows) => runSync("webhooks.enqueue", () => immediate(ctx, () => writeDeliveries(ctx, rows))),
    listDeliveries: (query) => runSync("webhooks.listDeliveries", () => list(ctx, query)),
    getDelivery: (id) =>
      runSync("webhooks.getDelivery", () => {
        const row = ctx.statement(GET_DELIVERY).get(id) as DeliveryRecord | undefined;
        return row === undefined ? null : toDelivery(row);
      }),
    claimDue: ({ limit, leaseMs, perEndpoint, exceptEndpoints = [] }) =>
      runSync("webhooks.claimDue", () =>
        immediate(ctx, () =>
          (
            ctx.statement(CLAIM).all({
              limit,
              leaseMs,
              perEndpoint: perEndpoint ?? limit,
              except: JSON.stringify(exceptEndpoints),
            }) as DeliveryRecord[]
          )
            .map(toDelivery)
            .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()),
        ),
      ),
    recordAttempt: (result) => runSync("webhooks.recordAttempt", () => record(ctx, result)),
    redeliver: (id, audit) =>
      runSync("webhooks.redeliver", () =>
        immediate(ctx, () => {
          const done = ctx.statement(REDELIVER).run(id).changes > 0;
          if (done) writeAudit(ctx, audit);
          return done;
        }),
      ),
    prune: (olderThanMs) =>
      runSync("webhooks.prune", () => ctx.statement(PRUNE).run({ olderThanMs }).changes),
    expirePending: (olderThanMs, lastError) =>
      runSync("webhooks.expirePending", () =>
        immediate(ctx, () => ctx.statement(EXPIRE_PENDING).run({ olderThanMs, lastError }).changes),
      ),
    countPending: () =>
      runSync("webhooks.countPending", () =>
        (ctx.statement(COUNT_PENDING).all() as { endpointId: string; pending: number }[]).map((r) => ({
          endpointId: r.endpointId,
          pending: Number(r.pending),
        })),
      ),
  };
}

function endpointParams(e: StoredWebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    secret: e.secretCipher,
    events: JSON.stringify(e.events),
    headers: JSON.stringify(e.headers),
    description: e.description,
    active: e.active ? 1 : 0,
    maxAttempts: e.maxAttempts,
    timeoutMs: e.timeoutMs,
    retry: JSON.stringify(e.retry),
  };
}

const jsonOr = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

function update(
  ctx: SqliteContext,
  id: string,
  patch: WebhookEndpointPatch,
  audit: AuditRecord,
  ifSecret: string | null,
): StoredWebhookEndpoint | null {
  const changed = ctx.statement(UPDATE_ENDPOINT).run({
    id,
    ifSecret,
    url: patch.url ?? null,
    secret: patch.secretCipher ?? null,
    events: jsonOr(patch.events),
    headers: jsonOr(patch.headers),
    setDescription: patch.description === undefined ? 0 : 1,
    description: patch.description ?? null,
    active: patch.active === undefined ? null : patch.active ? 1 : 0,
    maxAttempts: patch.maxAttempts ?? null,
    timeoutMs: patch.timeoutMs ?? null,
    retry: jsonOr(patch.retry),
  }).changes;
  if (changed === 0) return null;
  writeAudit(ctx, audit);
  return toEndpoint(ctx.statement(GET_ENDPOINT).get(id) as EndpointRecord);
}

function list(ctx: SqliteContext, query: WebhookDeliveryQuery) {
  const rows = ctx.statement(LIST_DELIVERIES).all({
    endpointId: query.endpointId,
    status: query.status,
    event: query.event,
    limit: query.limit,
  }) as DeliveryRecord[];
  return rows.map(toDelivery);
}

function record(ctx: SqliteContext, r: DeliveryAttemptResult): boolean {
  return (
    ctx.statement(RECORD).run({
      id: r.id,
      attempt: r.attempt,
      status: r.status,
      delayMs: r.delayMs,
      lastError: r.lastError,
      responseStatus: r.responseStatus,
      responseBody: r.responseBody,
    }).changes > 0
  );
}
