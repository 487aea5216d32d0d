/**
 * A delivery's attempts as the worker's deliverer makes them (issue 43): a delivery with `maxAttempts` N is
 * sent N times and is `failed` only after the Nth failed attempt, not after N - 1; and a target that is not
 * public is refused before any request on every attempt, not only the first (an IP literal is never looked up
 * by the connection, so the check before the attempt is all that stands between it and the request).
 */
import { describe, expect, it } from "vitest";
import { memoryApps, memoryBackend } from "./memory.js";
import { oneDelivery, receivers } from "./webhook-support.js";

const app = memoryApps();
const receiver500 = receivers();
const KEY = "unit-test-key-0123456789";
const SECRET = { secret: "whsec_unit_0123456789" };

/** Retries at once, so one `runOnce` makes every attempt the delivery has. */
const AT_ONCE = { backoff: "fixed", delayMs: 0, maxDelayMs: 0, jitter: false } as const;

describe("webhooks/attempts", () => {
  it("webhooks/failed-after-max-attempts: a delivery with maxAttempts 3 whose receiver keeps failing is sent 3 times and is failed only after the third", async () => {
    const receiver = await receiver500(500);
    const soniq = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } });
    await soniq.setup();
    const e = await soniq.webhooks.register({
      url: receiver.url,
      events: ["job.completed"],
      ...SECRET,
      maxAttempts: 3,
      retry: AT_ONCE,
    });
    const id = await oneDelivery(soniq, e.id, 3);
    await soniq.worker().runOnce();
    expect(receiver.requests()).toBe(3);
    const row = await soniq.webhooks.delivery(id);
    expect(row && [row.status, row.attempts, row.maxAttempts, row.responseStatus, row.lastError]).toEqual([
      "failed",
      3,
      3,
      500,
      "HTTP 500",
    ]);
  });

  it("webhooks/failed-after-max-attempts-one: maxAttempts 1 is one attempt, then failed; maxAttempts 2 is two", async () => {
    const receiver = await receiver500(500);
    const soniq = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } });
    await soniq.setup();
    const e = await soniq.webhooks.register({
      url: receiver.url,
      events: ["job.completed"],
      ...SECRET,
      retry: AT_ONCE,
    });
    const one = await oneDelivery(soniq, e.id, 1);
    await soniq.worker().runOnce();
    expect(receiver.requests()).toBe(1);
    expect((await soniq.webhooks.delivery(one))?.status).toBe("failed");
    const two = await oneDelivery(soniq, e.id, 2);
    await soniq.worker().runOnce();
    expect(receiver.requests()).toBe(3);
    const row = await soniq.webhooks.delivery(two);
    expect(row && [row.status, row.attempts]).toEqual(["failed", 2]);
  });

  it("webhooks/private-target-refused-every-attempt: an endpoint at a loopback address gets no request on any of its attempts from a worker that does not allow private networks", async () => {
    const receiver = await receiver500(500);
    const backend = memoryBackend();
    // Registered by an instance that allows private networks; delivered by one that does not.
    const admin = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: true } }, backend);
    await admin.setup();
    const e = await admin.webhooks.register({
      url: receiver.url,
      events: ["job.completed"],
      ...SECRET,
      maxAttempts: 3,
      retry: AT_ONCE,
    });
    const soniq = app({ webhooks: { secretKey: KEY, allowPrivateNetworks: false } }, backend);
    const id = await oneDelivery(soniq, e.id, 3);
    await soniq.worker().runOnce();
    const row = await soniq.webhooks.delivery(id);
    // Every attempt was made (the budget is spent), and each was refused before it sent anything.
    expect(row && [row.status, row.attempts, row.responseStatus]).toEqual(["failed", 3, null]);
    expect(row?.lastError).toContain('"127.0.0.1" resolves to 127.0.0.1');
    expect(receiver.requests()).toBe(0);
  });
});
