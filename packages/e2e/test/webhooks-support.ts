/**
 * A webhook receiver for the tests: an HTTP server on 127.0.0.1 (an ephemeral port) that records every
 * request (headers, raw body) and answers from a script of statuses (the last one repeats). Bounded: it
 * refuses bodies over 1 MiB and keeps at most 10,000 requests; `close()` ends it. A status of 0 never answers
 * (a hung receiver).
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhookSignature, type WebhookPayload } from "@soniq/core";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  payload: WebhookPayload;
  deliveryId: string;
  event: string;
}

export interface Receiver {
  url: string;
  requests: Received[];
  /** The statuses to answer with, in order; the last repeats. */
  answer(...statuses: number[]): void;
  /** Requests whose signature verifies with `secret` (or any of several, as a receiver rotating its secret). */
  signedWith(secret: string | readonly string[]): Received[];
  close(): Promise<void>;
}

export async function receiver(statuses: number[] = [200]): Promise<Receiver> {
  let script = [...statuses];
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > 1024 * 1024) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (requests.length < 10_000) {
        requests.push({
          headers: req.headers,
          body,
          payload: JSON.parse(body) as WebhookPayload,
          deliveryId: String(req.headers["x-webhook-delivery"]),
          event: String(req.headers["x-webhook-event"]),
        });
      }
      const status = script.length > 1 ? (script.shift() as number) : (script[0] ?? 200);
      if (status === 0) return;
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "not now");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    answer(...next) {
      script = [...next];
    },
    signedWith(secret) {
      return requests.filter((r) =>
        verifyWebhookSignature({
          payload: r.body,
          signature: r.headers["x-webhook-signature"] as string,
          timestamp: r.headers["x-webhook-timestamp"] as string,
          deliveryId: r.headers["x-webhook-delivery"] as string,
          event: r.headers["x-webhook-event"] as string,
          secret,
        }),
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const SECRET = "whsec_test_0123456789abcdef";
export const SECRET_KEY = "soniq-test-secret-key-0123456789";
