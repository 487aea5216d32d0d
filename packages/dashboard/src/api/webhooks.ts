/**
 * `/api/webhooks` (endpoints) and `/api/webhook-deliveries` (their deliveries), over `soniq.webhooks`, and
 * the one write: redeliver a delivered or failed delivery (audited `webhook.redeliver` with the key's
 * label). Endpoints are registered from code or the CLI (a secret has no place in a browser form).
 */
import {
  type Soniq,
  WEBHOOK_DELIVERY_STATUSES,
  type WebhookDelivery,
  type WebhookDeliveryFilter,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
} from "@soniq/core";
import { shownDelivery } from "@soniq/core/ops";
import { Hono } from "hono";
import type { Env } from "../context.js";
import { badRequest, DashboardError, notFound } from "../errors.js";
import { parseId, parseLimit, parseText } from "../query.js";
import { deliveryListRow, shownEndpoint } from "../security/views.js";
import { actor } from "./helpers.js";

export interface EndpointDetail {
  endpoint: WebhookEndpoint;
  /** Its newest deliveries (list rows: no payload). */
  deliveries: ReturnType<typeof deliveryListRow>[];
}

/** `?endpointId&status&event&limit` of the deliveries list; a bad value is 400. */
export function deliveryFilter(p: Record<string, string | undefined>): WebhookDeliveryFilter {
  const status = p.status || undefined;
  if (status !== undefined && !(WEBHOOK_DELIVERY_STATUSES as readonly string[]).includes(status)) {
    throw badRequest(`status must be one of ${WEBHOOK_DELIVERY_STATUSES.join(", ")}`);
  }
  const endpointId = p.endpointId ? parseText(p.endpointId, "endpointId", 200) : undefined;
  const event = parseText(p.event, "event", 64);
  return {
    ...(endpointId === undefined ? {} : { endpointId }),
    ...(status === undefined ? {} : { status: status as WebhookDeliveryStatus }),
    ...(event === undefined ? {} : { event }),
    limit: parseLimit(p.limit),
  };
}

export async function endpointDetail(soniq: Soniq, rawId: string | undefined): Promise<EndpointDetail> {
  const id = parseId(rawId, "webhook endpoint");
  const endpoint = await soniq.webhooks.get(id);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${id}.`);
  const deliveries = await soniq.webhooks.deliveries({ endpointId: id, limit: 50 });
  return { endpoint: shownEndpoint(endpoint), deliveries: deliveries.map(deliveryListRow) };
}

export async function deliveryDetail(soniq: Soniq, rawId: string | undefined): Promise<WebhookDelivery> {
  const id = parseId(rawId, "webhook delivery");
  const delivery = await soniq.webhooks.delivery(id);
  if (!delivery) throw notFound(`No webhook delivery with id ${id}.`);
  return shownDelivery(soniq.options.redact, delivery);
}

export function webhookRoutes(soniq: Soniq): Hono<Env> {
  const r = new Hono<Env>();
  r.get("/webhooks", async (c) => c.json({ endpoints: (await soniq.webhooks.list()).map(shownEndpoint) }));
  r.get("/webhooks/:id", async (c) => c.json(await endpointDetail(soniq, c.req.param("id"))));
  r.get("/webhook-deliveries", async (c) => {
    const rows = await soniq.webhooks.deliveries(deliveryFilter(c.req.query()));
    return c.json({ deliveries: rows.map(deliveryListRow) });
  });
  r.get("/webhook-deliveries/:id", async (c) =>
    c.json({ delivery: await deliveryDetail(soniq, c.req.param("id")) }),
  );
  r.post("/webhook-deliveries/:id/redeliver", async (c) => {
    const delivery = await deliveryDetail(soniq, c.req.param("id"));
    if (delivery.status === "pending") {
      throw new DashboardError(
        "conflict",
        `Delivery ${delivery.id} is pending: its attempts go on. Only a delivered or failed delivery is sent again.`,
      );
    }
    if (!(await soniq.webhooks.redeliver(delivery.id, actor(c)))) {
      throw new DashboardError(
        "conflict",
        `Delivery ${delivery.id} changed meanwhile; reload and try again.`,
      );
    }
    return c.json({ redelivered: true, id: delivery.id });
  });
  return r;
}
