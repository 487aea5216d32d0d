/** What the deliverer's core tests share: local receivers that count requests, and a delivery written as is. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import type { Soniq } from "../src/app/soniq.js";
import type { NewWebhookDelivery } from "../src/contract/index.js";

export interface Receiver {
  url: string;
  requests: () => number;
}

/**
 * Call at a test file's top level: returns `receiver(status)`, a local HTTP server answering every request with
 * `status` and counting them, closed after each test.
 */
export function receivers(): (status: number) => Promise<Receiver> {
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });
  return async (status) => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.statusCode = status;
      res.end(status < 300 ? "ok" : "down");
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/hook`, requests: () => requests };
  };
}

/** One delivery of `maxAttempts` (default 3) for the endpoint, written straight to the outbox; its id. */
export async function oneDelivery(soniq: Soniq, endpointId: string, maxAttempts = 3): Promise<string> {
  const row: NewWebhookDelivery = {
    id: crypto.randomUUID(),
    endpointId,
    event: "job.completed",
    payload: { event: "job.completed", timestamp: new Date().toISOString(), data: {}, metadata: {} },
    maxAttempts,
  };
  await soniq.backend.webhooks.enqueue([row]);
  return row.id;
}
