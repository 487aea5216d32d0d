/**
 * Issue 43, webhooks: an endpoint's retry delays have a ceiling (24 h each), refused at register and update
 * with nothing written; and a worker that cannot open an endpoint's sealed secret (no `webhooks.secretKey`, or
 * another one) leaves its deliveries pending, no attempt spent, for a worker that holds the key; and an optional
 * allow-list of target ports (`webhooks.allowedPorts`) refuses endpoints and attempts on other ports.
 */
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../src/index.js";
import { secretBox } from "../src/webhooks/secrets.js";
import { sendWebhook } from "../src/webhooks/sender.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { rejection } from "./support.js";
import { oneDelivery, receivers } from "./webhook-support.js";

const app = memoryApps();
const receiver = receivers();
const KEY = "unit-test-key-0123456789";
const SECRET = "whsec_unit_0123456789";
const DAY = 24 * 3_600_000;

describe("webhooks/limits", () => {
  it("webhooks/retry-ceiling: a retry delay over 24 h is refused at register and update, naming the field, and nothing is written", async () => {
    const soniq = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } });
    await soniq.setup();
    const base = { url: "http://127.0.0.1:9/hook", events: ["job.completed" as const], secret: SECRET };
    for (const retry of [
      { delaysMs: [1000, 400 * DAY] },
      { backoff: "fixed" as const, delayMs: DAY + 1 },
      { backoff: "exponential" as const, delayMs: 1000, maxDelayMs: 365 * DAY },
    ]) {
      const err = await rejection(soniq.webhooks.register({ ...base, retry }));
      expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
      expect((err as { context: { field: unknown } }).context.field).toBe("retry");
      expect((err as Error).message).toContain("86400000");
    }
    expect(await soniq.webhooks.list()).toEqual([]);

    const e = await soniq.webhooks.register({ ...base, retry: { delaysMs: [1000, DAY] } });
    const err = await rejection(soniq.webhooks.update(e.id, { retry: { delaysMs: [400 * DAY] } }));
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect((await soniq.webhooks.get(e.id))?.retry).toEqual({ delaysMs: [1000, DAY] });
    // An uncapped exponential policy is capped by the ceiling, not refused (its max delay defaults to it).
    await soniq.webhooks.update(e.id, { retry: { backoff: "exponential", delayMs: 1000 } });
  });

  it("webhooks/no-key-leaves-pending: a worker without the key (or with another) spends no attempt; a worker with it delivers", async () => {
    const target = await receiver(200);
    const backend = memoryBackend();
    const admin = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } }, backend);
    await admin.setup();
    const e = await admin.webhooks.register({ url: target.url, events: ["job.completed"], secret: SECRET });
    const id = await oneDelivery(admin, e.id);

    for (const webhooks of [
      { allowPrivateNetworks: true },
      { secretKey: "another-key-0123456789", allowPrivateNetworks: true },
    ]) {
      const errors: unknown[] = [];
      const keyless = app(
        {
          webhooks,
          logger: {
            debug() {},
            info() {},
            warn() {},
            error: (fields: unknown) => errors.push(fields),
          },
        },
        backend,
      );
      const worker = keyless.worker();
      await worker.runOnce();
      await worker.runOnce();
      const row = await admin.webhooks.delivery(id);
      expect(row && [row.status, row.attempts]).toEqual(["pending", 0]);
      expect(target.requests()).toBe(0);
      // Said once per endpoint by a worker, not once per pass.
      expect(errors.filter((f) => (f as { endpointId?: string }).endpointId === e.id)).toHaveLength(1);
    }

    await admin.worker().runOnce();
    const row = await admin.webhooks.delivery(id);
    expect(row && [row.status, row.attempts]).toEqual(["delivered", 1]);
    expect(target.requests()).toBe(1);
  });

  it("webhooks/no-key-unknown-endpoint: a delivery claimed before the keyless worker knew its endpoint is never burned to failed", async () => {
    const target = await receiver(200);
    const backend = memoryBackend();
    const admin = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } }, backend);
    await admin.setup();
    await admin.webhooks.register({ url: target.url, events: ["job.completed"], secret: SECRET });
    const keyless = app({ webhooks: { allowPrivateNetworks: true, refreshMs: 3_600_000 } }, backend);
    const worker = keyless.worker();
    await worker.runOnce(); // reads the endpoint list: only `known`
    const late = await admin.webhooks.register({
      url: target.url,
      events: ["job.completed"],
      secret: SECRET,
    });
    const id = await oneDelivery(admin, late.id, 1);
    await worker.runOnce();
    await worker.runOnce();
    const row = await admin.webhooks.delivery(id);
    // Claimed once (the claim counts the attempt, its only one), then given back due at once and left alone.
    expect(row && [row.status, row.attempts]).toEqual(["pending", 1]);
    expect(target.requests()).toBe(0);
    await admin.worker().runOnce();
    expect((await admin.webhooks.delivery(id))?.status).toBe("delivered");
  });
});

describe("webhooks/ports", () => {
  const base = { events: ["job.completed" as const], secret: SECRET };

  it("webhooks/allowed-ports-options: allowedPorts must be a non-empty list of ports (1..65535), reported as SONIQ_INVALID_OPTIONS", () => {
    for (const allowedPorts of [[], [0], [65536], [443.5], ["443"], 443]) {
      let err: unknown;
      try {
        app({ webhooks: { allowedPorts: allowedPorts as never } });
      } catch (e) {
        err = e;
      }
      expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS"), JSON.stringify(allowedPorts)).toBe(true);
      expect((err as Error).message).toContain("webhooks.allowedPorts");
    }
    expect(app({ webhooks: { allowedPorts: [443, 8443] } }).options.webhooks.allowedPorts).toEqual([
      443, 8443,
    ]);
    expect(app().options.webhooks.allowedPorts).toBeNull();
  });

  it("webhooks/allowed-ports-register: register and update refuse a URL on another port with SONIQ_WEBHOOK_TARGET_REFUSED; nothing is written", async () => {
    const soniq = app({
      webhooks: { secretKey: KEY, allowPrivateNetworks: true, allowedPorts: [443, 8443] },
    });
    await soniq.setup();
    for (const url of [
      "http://hooks.example.com/x",
      "https://hooks.example.com:444/x",
      "http://127.0.0.1:9/hook",
    ]) {
      const err = await rejection(soniq.webhooks.register({ ...base, url }));
      expect(isSoniqError(err, "SONIQ_WEBHOOK_TARGET_REFUSED"), url).toBe(true);
      expect((err as { context: { field: unknown; port: unknown } }).context).toMatchObject({ field: "url" });
      expect((err as Error).message).toContain("allowedPorts");
    }
    expect(await soniq.webhooks.list()).toEqual([]);
    // The scheme's default port counts: https is 443.
    const e = await soniq.webhooks.register({ ...base, url: "https://hooks.example.com/x" });
    await soniq.webhooks.register({ ...base, url: "https://hooks.example.com:8443/x" });
    const err = await rejection(soniq.webhooks.update(e.id, { url: "https://hooks.example.com:8080/x" }));
    expect(isSoniqError(err, "SONIQ_WEBHOOK_TARGET_REFUSED")).toBe(true);
    expect((err as { context: { port: unknown } }).context.port).toBe(8080);
    expect((await soniq.webhooks.get(e.id))?.url).toBe("https://hooks.example.com/x");
  });

  it("webhooks/allowed-ports-default: without allowedPorts any port is accepted", async () => {
    const soniq = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } });
    await soniq.setup();
    await soniq.webhooks.register({ ...base, url: "http://127.0.0.1:9/hook" });
    await soniq.webhooks.register({ ...base, url: "https://hooks.example.com:8080/x" });
    expect(await soniq.webhooks.list()).toHaveLength(2);
  });

  it("webhooks/allowed-ports-attempt: an endpoint stored on another port gets no request; the attempt fails naming the port", async () => {
    const target = await receiver(200);
    const backend = memoryBackend();
    const admin = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } }, backend);
    await admin.setup();
    const e = await admin.webhooks.register({ ...base, url: target.url });
    const id = await oneDelivery(admin, e.id);
    const strict = app(
      { webhooks: { secretKey: KEY, allowPrivateNetworks: true, allowedPorts: [443] } },
      backend,
    );
    await strict.worker().runOnce();
    const row = await admin.webhooks.delivery(id);
    expect(row && [row.status, row.attempts]).toEqual(["pending", 1]);
    expect(row?.lastError).toContain("allowedPorts");
    expect(target.requests()).toBe(0);
    // webhooks.test sends nothing either.
    const tested = await strict.webhooks.test(e.id);
    expect(tested?.ok).toBe(false);
    expect(tested?.error).toContain("allowedPorts");
    expect(target.requests()).toBe(0);
  });

  it("webhooks/allowed-ports-sender: sendWebhook refuses a port outside the list before any look-up", async () => {
    const box = secretBox(KEY);
    const endpoint = {
      id: crypto.randomUUID(),
      url: "https://hooks.example.com:8080/x",
      events: ["job.completed" as const],
      headers: {},
      description: null,
      active: true,
      maxAttempts: 3,
      timeoutMs: 5000,
      retry: { backoff: "fixed" as const, delayMs: 1000, maxDelayMs: 1000, jitter: false },
      secretCipher: "",
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    endpoint.secretCipher = box.seal(SECRET, endpoint.id);
    const asked: string[] = [];
    const outcome = await sendWebhook(
      endpoint,
      {
        id: crypto.randomUUID(),
        event: "job.completed",
        payload: { event: "job.completed", timestamp: new Date().toISOString(), data: {}, metadata: {} },
      },
      {
        secrets: box,
        allowPrivateNetworks: false,
        allowedPorts: [443],
        resolve: async (host) => {
          asked.push(host);
          return [{ address: "93.184.216.34", family: 4 }];
        },
      },
    );
    expect(outcome).toMatchObject({ ok: false, status: null });
    expect(outcome.error).toContain("8080");
    expect(asked).toEqual([]);
  });
});
