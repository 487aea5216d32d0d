/**
 * The webhooks facet: endpoints and the delivery outbox (`soniq_webhook_endpoints`,
 * `soniq_webhook_deliveries`). Writes with an audit record commit it in the same statement. Deliveries of
 * events are inserted by the facet that makes the event, in its statement or transaction
 * (internal/webhook-rows.ts). A claim takes due rows with FOR UPDATE SKIP LOCKED and moves them out of
 * reach for a lease, so two workers never attempt the same delivery at once.
 */

import type {
  AuditRecord,
  DeliveryAttemptResult,
  StoredWebhookEndpoint,
  WebhookDeliveryQuery,
  WebhookEndpointPatch,
  WebhooksFacet,
} from "@soniq/core/backend";
import { isJobId } from "@soniq/core/backend";
import { auditCte, auditValues } from "./internal/audit-rows.js";
import { type PgContext, query, readQuery } from "./internal/context.js";
import {
  DELIVERY_COLUMNS,
  deliveriesParam,
  ENDPOINT_COLUMNS,
  outboxCte,
  toDelivery,
  toEndpoint,
} from "./internal/webhook-rows.js";

const INSERT_ENDPOINT = `WITH created AS (
  INSERT INTO soniq_webhook_endpoints
    (id, url, secret, events, headers, description, active, max_attempts, timeout_ms, retry)
  VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9, $10::jsonb) RETURNING id),
  ${auditCte("created", 11)}
SELECT id FROM created`;
const UPDATE_ENDPOINT = `WITH changed AS (
  UPDATE soniq_webhook_endpoints SET
    url = COALESCE($2, url), secret = COALESCE($3, secret), events = COALESCE($4::jsonb, events),
    headers = COALESCE($5::jsonb, headers), description = CASE WHEN $6 THEN $7 ELSE description END,
    active = COALESCE($8, active), max_attempts = COALESCE($9, max_attempts),
    timeout_ms = COALESCE($10, timeout_ms), retry = COALESCE($11::jsonb, retry), updated_at = now()
  WHERE id = $1 AND ($19::text IS NULL OR secret = $19) RETURNING ${ENDPOINT_COLUMNS}),
  ${auditCte("changed", 12)}
SELECT * FROM changed`;
const REMOVE_ENDPOINT = `WITH removed AS (DELETE FROM soniq_webhook_endpoints WHERE id = $1 RETURNING id),
  ${auditCte("removed", 2)}
SELECT id FROM removed`;
const GET_ENDPOINT = `SELECT ${ENDPOINT_COLUMNS} FROM soniq_webhook_endpoints WHERE id = $1`;
const LIST_ENDPOINTS = `SELECT ${ENDPOINT_COLUMNS} FROM soniq_webhook_endpoints ORDER BY created_at, id`;
const ENQUEUE = `WITH ${outboxCte("$1")} SELECT 1`;
const GET_DELIVERY = `SELECT ${DELIVERY_COLUMNS} FROM soniq_webhook_deliveries WHERE id = $1`;
const LIST_DELIVERIES = `SELECT ${DELIVERY_COLUMNS} FROM soniq_webhook_deliveries
  WHERE ($1::uuid IS NULL OR endpoint_id = $1::uuid) AND ($2::text IS NULL OR status = $2)
    AND ($3::text IS NULL OR event = $3)
  ORDER BY created_at DESC, id DESC LIMIT $4`;
// Per active endpoint (not skipped), its oldest due rows up to the cap, locked; then the oldest of those.
const CLAIM = `UPDATE soniq_webhook_deliveries
  SET attempts = attempts + 1, next_retry_at = now() + $2::float8 * interval '1 millisecond', updated_at = now()
  WHERE id = ANY(ARRAY(
    SELECT d.id FROM soniq_webhook_endpoints e
    CROSS JOIN LATERAL (
      SELECT id, next_retry_at FROM soniq_webhook_deliveries
      WHERE endpoint_id = e.id AND status = 'pending' AND next_retry_at <= now()
      ORDER BY next_retry_at LIMIT $3
      FOR UPDATE SKIP LOCKED) d
    WHERE e.active AND NOT (e.id = ANY($4::uuid[]))
    ORDER BY d.next_retry_at LIMIT $1))
  RETURNING ${DELIVERY_COLUMNS}`;
const RECORD = `UPDATE soniq_webhook_deliveries SET status = $3,
    next_retry_at = CASE WHEN $3 = 'pending' THEN now() + $4::float8 * interval '1 millisecond' END,
    delivered_at = CASE WHEN $3 = 'delivered' THEN now() END,
    last_error = $5, response_status = $6, response_body = $7, updated_at = now()
  WHERE id = $1 AND status = 'pending' AND attempts = $2`;
const REDELIVER = `WITH again AS (
  UPDATE soniq_webhook_deliveries SET status = 'pending', attempts = 0, next_retry_at = now(),
    delivered_at = NULL, updated_at = now()
  WHERE id = $1 AND status <> 'pending' RETURNING id),
  ${auditCte("again", 2)}
SELECT id FROM again`;

// The created_at index finds the candidates: a row last written before the cutoff was created before it.
const PRUNE = `DELETE FROM soniq_webhook_deliveries
  WHERE created_at < now() - $1::float8 * interval '1 millisecond'
    AND updated_at < now() - $1::float8 * interval '1 millisecond' AND status <> 'pending'`;
const EXPIRE_PENDING = `UPDATE soniq_webhook_deliveries
  SET status = 'failed', next_retry_at = NULL, last_error = $2, updated_at = now()
  WHERE status = 'pending' AND created_at < now() - $1::float8 * interval '1 millisecond'`;
const COUNT_PENDING = `SELECT endpoint_id, count(*)::int AS pending FROM soniq_webhook_deliveries
  WHERE status = 'pending' GROUP BY endpoint_id`;

/** An id that cannot name a row (not a UUID) reads as not found instead of failing the cast. */
const isUuid = (id: string) => isJobId(id);

export function webhooksFacet(ctx: PgContext): WebhooksFacet {
  return {
    createEndpoint: async (e, audit) => {
      await query(ctx, "webhooks.createEndpoint", {
        text: INSERT_ENDPOINT,
        values: [...endpointValues(e), ...auditValues(audit)],
      });
    },
    updateEndpoint: (id, patch, audit, guard) => update(ctx, id, patch, audit, guard?.secretCipher ?? null),
    removeEndpoint: async (id, audit) => {
      if (!isUuid(id)) return false;
      const res = await query(ctx, "webhooks.removeEndpoint", {
        text: REMOVE_ENDPOINT,
        values: [id, ...auditValues(audit)],
      });
      return res.rows.length === 1;
    },
    getEndpoint: async (id) => {
      if (!isUuid(id)) return null;
      const res = await query(ctx, "webhooks.getEndpoint", { text: GET_ENDPOINT, values: [id] });
      return res.rows[0] === undefined ? null : toEndpoint(res.rows[0]);
    },
    listEndpoints: async () => {
      const res = await query(ctx, "webhooks.listEndpoints", { text: LIST_ENDPOINTS, values: [] });
      return res.rows.map(toEndpoint);
    },
    enqueue: async (rows) => {
      if (rows.length === 0) return;
      await query(ctx, "webhooks.enqueue", { text: ENQUEUE, values: [deliveriesParam(rows)] });
    },
    listDeliveries: async (q: WebhookDeliveryQuery) => {
      if (q.endpointId !== null && !isUuid(q.endpointId)) return [];
      const res = await readQuery(ctx, "webhooks.listDeliveries", {
        text: LIST_DELIVERIES,
        values: [q.endpointId, q.status, q.event, q.limit],
      });
      return res.rows.map(toDelivery);
    },
    getDelivery: async (id) => {
      if (!isUuid(id)) return null;
      const res = await query(ctx, "webhooks.getDelivery", { text: GET_DELIVERY, values: [id] });
      return res.rows[0] === undefined ? null : toDelivery(res.rows[0]);
    },
    claimDue: async ({ limit, leaseMs, perEndpoint, exceptEndpoints = [] }) => {
      const res = await query(ctx, "webhooks.claimDue", {
        text: CLAIM,
        values: [limit, leaseMs, perEndpoint ?? limit, exceptEndpoints.filter(isUuid)],
      });
      return res.rows.map(toDelivery).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    },
    recordAttempt: (result) => record(ctx, result),
    redeliver: async (id, audit) => {
      if (!isUuid(id)) return false;
      const res = await query(ctx, "webhooks.redeliver", {
        text: REDELIVER,
        values: [id, ...auditValues(audit)],
      });
      return res.rows.length === 1;
    },
    prune: async (olderThanMs) =>
      (await query(ctx, "webhooks.prune", { text: PRUNE, values: [olderThanMs] })).rowCount ?? 0,
    expirePending: async (olderThanMs, lastError) =>
      (await query(ctx, "webhooks.expirePending", { text: EXPIRE_PENDING, values: [olderThanMs, lastError] }))
        .rowCount ?? 0,
    countPending: async () => {
      const res = await query<{ endpoint_id: string; pending: number }>(ctx, "webhooks.countPending", {
        text: COUNT_PENDING,
        values: [],
      });
      return res.rows.map((r) => ({ endpointId: r.endpoint_id, pending: r.pending }));
    },
  };
}

function endpointValues(e: StoredWebhookEndpoint): unknown[] {
  return [
    e.id,
    e.url,
    e.secretCipher,
    JSON.stringify(e.events),
    JSON.stringify(e.headers),
    e.description,
    e.active,
    e.maxAttempts,
    e.timeoutMs,
    JSON.stringify(e.retry),
  ];
}

const jsonOr = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

async function update(
  ctx: PgContext,
  id: string,
  patch: WebhookEndpointPatch,
  audit: AuditRecord,
  ifSecret: string | null,
): Promise<StoredWebhookEndpoint | null> {
  if (!isUuid(id)) return null;
  const res = await query(ctx, "webhooks.updateEndpoint", {
    text: UPDATE_ENDPOINT,
    values: [
      id,
      patch.url ?? null,
      patch.secretCipher ?? null,
      jsonOr(patch.events),
      jsonOr(patch.headers),
      patch.description !== undefined,
      patch.description ?? null,
      patch.active ?? null,
      patch.maxAttempts ?? null,
      patch.timeoutMs ?? null,
      jsonOr(patch.retry),
      ...auditValues(audit),
      ifSecret,
    ],
  });
  return res.rows[0] === undefined ? null : toEndpoint(res.rows[0]);
}

async function record(ctx: PgContext, r: DeliveryAttemptResult): Promise<boolean> {
  const res = await query(ctx, "webhooks.recordAttempt", {
    text: RECORD,
    values: [r.id, r.attempt, r.status, r.delayMs, r.lastError, r.responseStatus, r.responseBody],
  });
  return res.rowCount === 1;
}
