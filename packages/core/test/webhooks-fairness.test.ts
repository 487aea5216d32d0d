/**
 * One slow receiver does not stall the others: deliveries of different endpoints proceed independently, a
 * black-holed receiver holds at most a few of its own deliveries in flight, an endpoint that keeps failing
 * is rested by a circuit breaker, the attempt's timer and the worker's stop cover the DNS check, and an
 * inactive endpoint's deliveries are parked (not claimed, not redeliverable).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StoredWebhookEndpoint } from "../src/contract/index.js";
import { isSoniqError } from "../src/index.js";
import { EndpointBreaker } from "../src/webhooks/breaker.js";
import { secretBox } from "../src/webhooks/secrets.js";
import { sendWebhook } from "../src/webhooks/sender.js";
import { memoryApps } from "./memory.js";
import { eventually } from "./support.js";

/** The system resolver, scripted: `hang` makes every later look-up wait forever (a black-holed DNS). */
const dns = vi.hoisted(() => ({ hang: false, asked: 0 }));
vi.mock("node:dns/promises", async (original) => {
  const real = await original<typeof import("node:dns/promises")>();
  const lookup = async (host: string, options: unknown) => {
    if (!host.endsWith(".example")) return real.lookup(host, options as never);
    dns.asked++;
    if (dns.hang) return new Promise<never>(() => {});
    return [{ address: "93.184.216.34", family: 4 }];
  };
  return { ...real, lookup, default: { ...real, lookup } };
});

const app = memoryApps();
const SECRET = { secret: "whsec_unit_0123456789" };
const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  dns.hang = false;
  for (const s of servers.splice(0)) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function listening(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

function endpointAt(url: string, timeoutMs: number): StoredWebhookEndpoint {
  const box = secretBox("unit-test-key-0123456789");
  const id = crypto.randomUUID();
  return {
    id,
    url,
    events: ["job.completed"],
    headers: {},
    description: null,
    active: true,
    maxAttempts: 3,
    timeoutMs,
    retry: { backoff: "fixed", delayMs: 1000, maxDelayMs: 1000, jitter: false },
    secretCipher: box.seal(SECRET.secret, id),
    createdAt: new Date(),
    updatedAt: new Date(),
  };
}
const aDelivery = {
  id: crypto.randomUUID(),
  event: "job.completed" as const,
  payload: { event: "job.completed" as const, timestamp: new Date().toISOString(), data: {}, metadata: {} },
};
const box = secretBox("unit-test-key-0123456789");

describe("webhooks/fairness", () => {
  it("webhooks/black-hole-does-not-stall-others: a receiver that never answers holds at most 2 deliveries while a healthy one gets all of its own", async () => {
    let held = 0;
    const hole = await listening(() => {
      held++; // accepted, never answered
    });
    const healthy: string[] = [];
    const good = await listening((req, res) => {
      healthy.push(String(req.headers["x-webhook-delivery"]));
      res.end("ok");
    });
    const soniq = app({ webhooks: { secretKey: "unit-test-key-0123456789", allowPrivateNetworks: true } });
    await soniq.setup();
    await soniq.webhooks.register({ url: hole, events: ["job.completed"], ...SECRET, timeoutMs: 120_000 });
    await soniq.webhooks.register({ url: good, events: ["job.completed"], ...SECRET });
    soniq.job("fair.ok", async () => 1);
    for (let i = 0; i < 12; i++) await soniq.jobs.enqueue("fair.ok", { i });
    const worker = soniq.worker({ pollIntervalMs: 20 });
    await worker.start();
    await eventually(() => expect(healthy).toHaveLength(12), 20_000);
    expect(held).toBeLessThanOrEqual(2);
    await worker.stop();
  });

  it("webhooks/dns-check-timed: a DNS check that hangs is cut by the attempt's timer, and by the stop signal", async () => {
    dns.hang = true;
    const slow = endpointAt("http://hang.example/hook", 50);
    expect(await sendWebhook(slow, aDelivery, { secrets: box, allowPrivateNetworks: false })).toEqual({
      ok: false,
      status: null,
      body: null,
      error: "timed out",
    });
    const stop = new AbortController();
    const long = endpointAt("http://hang.example/hook", 600_000);
    const attempt = sendWebhook(long, aDelivery, {
      secrets: box,
      allowPrivateNetworks: false,
      signal: stop.signal,
    });
    stop.abort();
    expect(await attempt).toMatchObject({ ok: false, error: "aborted: the worker stopped" });
  });

  it("webhooks/stop-during-dns-check: stop() returns while an attempt's DNS check hangs", async () => {
    const soniq = app({ webhooks: { secretKey: "unit-test-key-0123456789" } });
    await soniq.setup();
    await soniq.webhooks.register({
      url: "http://hang.example/hook",
      events: ["job.completed"],
      ...SECRET,
      timeoutMs: 120_000,
    });
    soniq.job("fair.ok", async () => 1);
    await soniq.jobs.enqueue("fair.ok", {});
    dns.hang = true;
    const asked = dns.asked;
    const worker = soniq.worker({ pollIntervalMs: 20 });
    await worker.start();
    await eventually(() => expect(dns.asked).toBeGreaterThan(asked));
    await worker.stop();
    const [d] = await soniq.webhooks.deliveries();
    expect(d).toMatchObject({ status: "pending", attempts: 1, lastError: "aborted: the worker stopped" });
  });

  it("webhooks/redeliver-inactive-refused: redeliver of a delivery whose endpoint is inactive throws SONIQ_INVALID_STATE", async () => {
    const soniq = app({ webhooks: { secretKey: "unit-test-key-0123456789", allowPrivateNetworks: true } });
    await soniq.setup();
    const e = await soniq.webhooks.register({
      url: "http://127.0.0.1:9/x",
      events: ["job.completed"],
      ...SECRET,
    });
    const id = crypto.randomUUID();
    const payload = {
      event: "job.completed" as const,
      timestamp: "2026-01-01T00:00:00.000Z",
      data: {},
      metadata: {},
    };
    await soniq.backend.webhooks.enqueue([
      { id, endpointId: e.id, event: "job.completed", payload, maxAttempts: 1 },
    ]);
    const [claimed] = (await soniq.backend.webhooks.claimDue({ limit: 10, leaseMs: 60_000 })).filter(
      (d) => d.id === id,
    );
    expect(claimed).toBeDefined();
    await soniq.backend.webhooks.recordAttempt({
      id,
      attempt: 1,
      status: "failed",
      delayMs: 0,
      lastError: "HTTP 500",
      responseStatus: 500,
      responseBody: null,
    });
    await soniq.webhooks.update(e.id, { active: false });
    const err = await soniq.webhooks.redeliver(id).then(
      () => null,
      (x: unknown) => x,
    );
    expect(isSoniqError(err, "SONIQ_INVALID_STATE")).toBe(true);
    expect((await soniq.webhooks.delivery(id))?.status).toBe("failed");
    await soniq.webhooks.update(e.id, { active: true });
    expect(await soniq.webhooks.redeliver(id)).toBe(true);
  });
});

describe("webhooks/breaker", () => {
  it("webhooks/breaker-opens-and-resets: K consecutive failures rest an endpoint for the cool-down; a success resets it", () => {
    let now = 0;
    const breaker = new EndpointBreaker({ threshold: 3, coolDownMs: 1000, now: () => now });
    for (let i = 0; i < 2; i++) breaker.failed("a");
    expect(breaker.resting()).toEqual([]);
    breaker.failed("a");
    expect(breaker.resting()).toEqual(["a"]);
    now = 999;
    expect(breaker.resting()).toEqual(["a"]);
    now = 1000;
    expect(breaker.resting()).toEqual([]); // half open: one more try
    breaker.failed("a");
    expect(breaker.resting()).toEqual(["a"]); // failed again: rests again at once
    now = 2500;
    breaker.succeeded("a");
    breaker.failed("a");
    expect(breaker.resting()).toEqual([]); // the success reset the count
  });
});
