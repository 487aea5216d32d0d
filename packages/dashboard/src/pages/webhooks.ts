/**
 * Webhook pages: endpoints (list and detail with their newest deliveries) and deliveries (filter by status,
 * endpoint and event; one delivery with its payload, last response and a Redeliver button).
 */

import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENTS,
  type WebhookDelivery,
  type WebhookEndpoint,
} from "@soniq/core";
import { shortId } from "@soniq/core/ops";
import type { EndpointDetail } from "../api/webhooks.js";
import { formatDate, formatDuration, type Html, html, prettyJson } from "../html.js";
import type { DeliveryListRow } from "../security/views.js";
import { canWrite, type PageFrame, statusBadge, writeHint } from "./layout.js";

function endpointRow(base: string, e: WebhookEndpoint): Html {
  return html`<tr data-endpoint-id="${e.id}"><td><a href="${base}/webhooks/${e.id}"><code>${shortId(e.id)}</code></a></td>
<td><code>${e.url}</code></td><td class="small">${e.events.join(", ")}</td><td>${statusBadge(e.active ? "active" : "inactive")}</td>
<td class="num">${e.maxAttempts}</td><td class="num">${formatDuration(e.timeoutMs)}</td><td class="small">${e.description ?? ""}</td>
<td class="small">${formatDate(e.createdAt)}</td></tr>`;
}

export function endpointsPage(frame: PageFrame, endpoints: readonly WebhookEndpoint[]): Html {
  const base = frame.base;
  const rows = endpoints.map((e) => endpointRow(base, e));
  return html`<h1>Webhooks</h1>
<p><a href="${base}/webhook-deliveries">All deliveries</a> · <a href="${base}/webhook-deliveries?status=failed">Failed deliveries</a></p>
<p class="muted small">Endpoints are registered from code (<code>soniq.webhooks.register</code>) or the CLI (<code>soniq webhooks add</code>). Secrets are stored encrypted and never shown.</p>
<table data-testid="endpoints"><thead><tr><th scope="col">Id</th><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th class="num" scope="col">Max attempts</th><th class="num" scope="col">Timeout</th><th scope="col">Description</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8" class="muted">No webhook endpoints registered.</td></tr>`}</tbody></table>`;
}

/** The last answer of a delivery: its HTTP status, or its error's first line. */
function lastResponse(d: DeliveryListRow): Html | string {
  if (d.responseStatus !== null) return html`<code>HTTP ${d.responseStatus}</code>`;
  return d.attempts === 0 ? "—" : (d.lastError ?? "—");
}

function deliveryRows(base: string, rows: readonly DeliveryListRow[], withEndpoint: boolean): Html[] {
  return rows.map(
    (
      d,
    ) => html`<tr data-delivery-id="${d.id}" data-status="${d.status}"><td><a href="${base}/webhook-deliveries/${d.id}"><code>${shortId(d.id)}</code></a></td>
<td><code>${d.event}</code></td>${withEndpoint ? html`<td><a href="${base}/webhooks/${d.endpointId}"><code>${shortId(d.endpointId)}</code></a></td>` : ""}
<td>${statusBadge(d.status)}</td><td class="num">${d.attempts}/${d.maxAttempts}</td><td class="small err">${lastResponse(d)}</td>
<td class="small">${d.status === "pending" ? formatDate(d.nextAttemptAt) : "—"}</td><td class="small">${formatDate(d.createdAt)}</td></tr>`,
  );
}

function deliveriesTable(base: string, rows: readonly DeliveryListRow[], withEndpoint: boolean): Html {
  return html`<table data-testid="deliveries"><thead><tr><th scope="col">Id</th><th scope="col">Event</th>${withEndpoint ? html`<th scope="col">Endpoint</th>` : ""}<th scope="col">Status</th><th class="num" scope="col">Attempts</th><th scope="col">Last response</th><th scope="col">Next attempt</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.length ? deliveryRows(base, rows, withEndpoint) : html`<tr><td colspan="${withEndpoint ? 8 : 7}" class="muted">No deliveries match.</td></tr>`}</tbody></table>`;
}

function headerList(headers: Record<string, string>): Html | Html[] {
  const names = Object.keys(headers);
  return names.length ? names.map((n) => html`<code>${n}</code> `) : html`<span class="muted">none</span>`;
}

export function endpointDetailPage(frame: PageFrame, d: EndpointDetail): Html {
  const e = d.endpoint;
  return html`<h1>Webhook endpoint <code>${e.id}</code></h1>
<dl class="panel kv" data-testid="endpoint"><dt>URL</dt><dd><code>${e.url}</code></dd><dt>Events</dt><dd>${e.events.join(", ")}</dd>
<dt>State</dt><dd>${statusBadge(e.active ? "active" : "inactive")}</dd><dt>Description</dt><dd>${e.description ?? "—"}</dd>
<dt>Max attempts</dt><dd>${e.maxAttempts}</dd><dt>Timeout</dt><dd>${formatDuration(e.timeoutMs)}</dd>
<dt>Retry</dt><dd><code>${JSON.stringify(e.retry)}</code></dd><dt>Secret</dt><dd>${e.hasSecret ? "set (stored encrypted, never shown)" : "none"}</dd>
<dt>Extra headers</dt><dd>${headerList(e.headers)} <span class="muted small">(values hidden)</span></dd>
<dt>Created</dt><dd>${formatDate(e.createdAt)}</dd><dt>Updated</dt><dd>${formatDate(e.updatedAt)}</dd></dl>
<h2>Newest deliveries</h2><p><a href="${frame.base}/webhook-deliveries?endpointId=${e.id}">All of this endpoint's deliveries</a></p>
${deliveriesTable(frame.base, d.deliveries, false)}`;
}

function filterForm(base: string, p: Record<string, string | undefined>): Html {
  return html`<form class="filters" method="get" action="${base}/webhook-deliveries" role="search">
<label>Status<select name="status"><option value="">any</option>${WEBHOOK_DELIVERY_STATUSES.map(
    (s) => html`<option value="${s}"${p.status === s ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
<label>Event<select name="event"><option value="">any</option>${[...WEBHOOK_EVENTS, "webhook.test"].map(
    (e) => html`<option value="${e}"${p.event === e ? html` selected` : ""}>${e}</option>`,
  )}</select></label>
<label>Endpoint id<input name="endpointId" value="${p.endpointId ?? ""}" size="20"></label>
<label>Limit<input name="limit" value="${p.limit ?? ""}" placeholder="50" size="4" inputmode="numeric"></label>
<button type="submit">Filter</button> <a href="${base}/webhook-deliveries">Clear</a></form>`;
}

export function deliveriesPage(
  frame: PageFrame,
  p: Record<string, string | undefined>,
  rows: readonly DeliveryListRow[] | null,
  error: string | null,
): Html {
  const base = frame.base;
  const head = html`<h1>Webhook deliveries</h1><p><a href="${base}/webhooks">Endpoints</a></p>${filterForm(base, p)}
<p class="muted small">pending: waiting for its next attempt; delivered: answered 2xx; failed: every attempt failed (open it to redeliver).</p>`;
  if (error || !rows) return html`${head}<div class="banner bad" role="alert">${error}</div>`;
  return html`${head}${deliveriesTable(base, rows, true)}`;
}

export function deliveryDetailPage(frame: PageFrame, d: WebhookDelivery): Html {
  const base = frame.base;
  const actions =
    d.status === "pending"
      ? html`<p class="muted small">Pending: the next attempt is due ${formatDate(d.nextAttemptAt)}.</p>`
      : canWrite(frame)
        ? html`<div class="actions"><button type="button" data-post="${base}/api/webhook-deliveries/${d.id}/redeliver" data-done="Redelivery queued: a worker sends it again.">Redeliver</button></div>`
        : writeHint(frame);
  return html`<h1>Webhook delivery <code>${d.id}</code></h1>${actions}
<dl class="panel kv" data-testid="delivery"><dt>Event</dt><dd><code>${d.event}</code></dd>
<dt>Endpoint</dt><dd><a href="${base}/webhooks/${d.endpointId}"><code>${d.endpointId}</code></a></dd>
<dt>Status</dt><dd>${statusBadge(d.status)}</dd><dt>Attempts</dt><dd>${d.attempts} of ${d.maxAttempts}</dd>
<dt>Next attempt</dt><dd>${d.status === "pending" ? formatDate(d.nextAttemptAt) : "—"}</dd>
<dt>Last response</dt><dd>${d.responseStatus === null ? "—" : html`<code>HTTP ${d.responseStatus}</code>`}</dd>
<dt>Created</dt><dd>${formatDate(d.createdAt)}</dd><dt>Delivered</dt><dd>${formatDate(d.deliveredAt)}</dd><dt>Updated</dt><dd>${formatDate(d.updatedAt)}</dd></dl>
<h2>Last error</h2>${d.lastError ? html`<pre data-testid="delivery-error">${d.lastError}</pre>` : html`<p class="muted">None.</p>`}
<h2>Response body</h2>${d.responseBody ? html`<pre data-testid="delivery-response">${d.responseBody}</pre>` : html`<p class="muted">None.</p>`}
<h2>Payload</h2><pre data-testid="delivery-payload">${prettyJson(d.payload)}</pre>`;
}
