/**
 * Webhook endpoints and deliveries for people. An endpoint's extra header values are hidden everywhere the
 * CLI prints one (they often carry a token); the secret never leaves core.
 */
import type { WebhookDelivery, WebhookEndpoint } from "@soniq/core";
import { shownUrl } from "@soniq/core/ops";
import { duration, firstLine, type Printer, shortId } from "./output.js";

/** What the CLI prints of an endpoint's header values. */
export const HIDDEN = "[hidden]";

/** The endpoint with its URL's tokens (core's `shownUrl`) and each extra header's value hidden. */
export function shownEndpoint(endpoint: WebhookEndpoint): WebhookEndpoint {
  return {
    ...endpoint,
    url: shownUrl(endpoint.url),
    headers: Object.fromEntries(Object.keys(endpoint.headers).map((name) => [name, HIDDEN])),
  };
}

export function endpointsTable(p: Printer, endpoints: WebhookEndpoint[]): void {
  if (endpoints.length === 0) {
    p.line("no webhook endpoints. Add one with soniq webhooks add <url> --events ... --secret-env VAR.");
    return;
  }
  p.table(
    ["ID", "URL", "EVENTS", "STATE", "ATTEMPTS", "TIMEOUT", "HEADERS", "CREATED"],
    endpoints.map((e) => [
      e.id,
      shownUrl(e.url),
      e.events.join(","),
      p.status(e.active ? "active" : "inactive"),
      String(e.maxAttempts),
      duration(e.timeoutMs),
      Object.keys(e.headers).join(",") || "-",
      p.ago(e.createdAt),
    ]),
  );
}

/** The last answer: the HTTP status, else the error's first line. */
function lastResponse(d: WebhookDelivery): string {
  if (d.responseStatus !== null) return `HTTP ${d.responseStatus}`;
  return d.attempts === 0 ? "-" : firstLine(d.lastError, 40);
}

export function deliveriesTable(p: Printer, rows: WebhookDelivery[]): void {
  if (rows.length === 0) {
    p.line("no webhook deliveries match.");
    return;
  }
  p.table(
    [
      "ID",
      "EVENT",
      "ENDPOINT",
      "STATUS",
      "ATTEMPTS",
      "LAST RESPONSE",
      "NEXT ATTEMPT",
      "CREATED",
      "LAST ERROR",
    ],
    rows.map((d) => [
      d.id,
      d.event,
      shortId(d.endpointId),
      p.status(d.status),
      `${d.attempts}/${d.maxAttempts}`,
      lastResponse(d),
      d.status === "pending" ? p.ago(d.nextAttemptAt) : "-",
      p.ago(d.createdAt),
      firstLine(d.lastError, 50),
    ]),
  );
}
