/**
 * Webhook fixtures: a local HTTP receiver (127.0.0.1 only, bounded) whose answer a test sets, and an app on
 * the memory backend with one endpoint pointing at it and two `job.dead_letter` deliveries attempted once and
 * `failed` (a 503 answer; the endpoint allows one attempt).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { memoryBackend } from "@soniq/backend-memory";
import { type Backend, Soniq, type WebhookEndpoint } from "@soniq/core";

export const SECRET_KEY = "dashboard-test-secret-key-0123456789";
export const ENDPOINT_SECRET = "endpoint-signing-secret-abcdef";
export const HEADER_TOKEN = "Bearer header-token-never-shown";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  /** What the next requests are answered with. */
  status: number;
  readonly requests: Received[];
  close(): Promise<void>;
}

/** At most this many requests are kept, each body cut at 64 kB: a runaway sender cannot fill memory. */
const MAX_REQUESTS = 200;
const MAX_BODY = 64 * 1024;

export async function receiver(status: number): Promise<Receiver> {
  const requests: Received[] = [];
  const r = { status, requests } as Receiver;
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      if (body.length < MAX_BODY) body += chunk.slice(0, MAX_BODY - body.length);
    });
    req.on("end", () => {
      if (requests.length < MAX_REQUESTS) requests.push({ headers: req.headers, body });
      res.writeHead(r.status, { "content-type": "text/plain" }).end(r.status < 300 ? "ok" : "receiver down");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

export interface WebhookSeeded {
  soniq: Soniq;
  receiver: Receiver;
  endpoint: WebhookEndpoint;
  /** The two dead-lettered jobs' ids their payloads name (args `{ card: "4242...", cents }`). */
  dead: string[];
  /** Their `job.dead_letter` deliveries, both failed after one attempt. */
  failed: string[];
  close(): Promise<void>;
}

/** Retries `check` until it passes (every 25 ms, up to `timeoutMs`), then rethrows its last failure. */
export async function eventually(check: () => Promise<void>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Sends due deliveries with a worker until `done` holds, then stops it. */
export async function deliverUntil(soniq: Soniq, done: () => Promise<void>): Promise<void> {
  const worker = soniq.worker({ queues: ["nothing.here"], pollIntervalMs: 50 });
  await worker.start();
  try {
    await eventually(done);
  } finally {
    await worker.stop();
  }
}

/**
 * The deliveries are written and attempted through the backend's webhooks facet (what the engine does for
 * a `job.dead_letter` event and a 503 answer), so the pages have rows in a known state at once. Their payload
 * is stored as an app without `redact` would store it: the card number in the args is the dashboard's to hide.
 */
export async function webhookApp(
  options: { redact?: string[]; backend?: Backend<unknown> } = {},
): Promise<WebhookSeeded> {
  const hook = await receiver(503);
  const soniq = new Soniq({
    backend: options.backend ?? memoryBackend(),
    webhooks: { secretKey: SECRET_KEY, allowPrivateNetworks: true, refreshMs: 50 },
    ...(options.redact ? { redact: options.redact } : {}),
  });
  await soniq.setup();
  const endpoint = await soniq.webhooks.register({
    url: hook.url,
    events: ["job.dead_letter"],
    secret: ENDPOINT_SECRET,
    headers: { Authorization: HEADER_TOKEN },
    description: "ops pager",
    maxAttempts: 1,
    timeoutMs: 2_000,
  });
  const dead = [randomUUID(), randomUUID()];
  // The facet the engine writes through: the rows an event makes, then one failed attempt each.
  const facet = soniq.backend.webhooks;
  await facet.enqueue(
    dead.map((jobId, i) => ({
      id: randomUUID(),
      endpointId: endpoint.id,
      event: "job.dead_letter" as const,
      maxAttempts: 1,
      payload: {
        event: "job.dead_letter" as const,
        timestamp: new Date().toISOString(),
        data: {
          jobId,
          jobName: "billing.charge",
          queue: "default",
          attempt: 1,
          maxAttempts: 1,
          args: { card: "4242424242424242", cents: 100 * (i + 1) },
          reason: "permanent_failure",
          error: `card declined for ${100 * (i + 1)}`,
        },
        metadata: { source: "soniq" },
      },
    })),
  );
  const claimed = await facet.claimDue({ limit: 10, leaseMs: 60_000 });
  for (const d of claimed) {
    await facet.recordAttempt({
      id: d.id,
      attempt: d.attempts,
      status: "failed",
      delayMs: 0,
      lastError: "HTTP 503",
      responseStatus: 503,
      responseBody: "receiver down",
    });
  }
  const failed = (await soniq.webhooks.deliveries({ status: "failed" })).map((d) => d.id);
  if (failed.length !== 2) throw new Error(`seeding left ${failed.length} failed deliveries, not 2`);
  return {
    soniq,
    receiver: hook,
    endpoint,
    dead,
    failed,
    close: async () => {
      await soniq.close();
      await hook.close();
    },
  };
}
