/**
 * One delivery attempt. A webhook's host is vetted by the connection that sends the delivery, not only by a
 * check before it: a name that resolves to a public address for the check and to a private one for the
 * connection (DNS rebinding) never reaches the private address. An attempt ends at the endpoint's timeoutMs.
 * The request's signature covers its delivery id and event headers.
 */
import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { StoredWebhookEndpoint } from "../src/contract/index.js";
import { secretBox } from "../src/webhooks/secrets.js";
import { sendWebhook } from "../src/webhooks/sender.js";
import { verifyWebhookSignature } from "../src/webhooks/signature.js";
import { publicOnlyLookup, type Resolver } from "../src/webhooks/targets.js";

const PUBLIC: LookupAddress = { address: "93.184.216.34", family: 4 };
const LOOPBACK: LookupAddress = { address: "127.0.0.1", family: 4 };

/** Answers `first` to the first question and `later` to every other one, counting them. */
function rebinding(first: LookupAddress[], later: LookupAddress[]) {
  const asked: string[] = [];
  const resolve: Resolver = async (host) => {
    asked.push(host);
    return asked.length === 1 ? first : later;
  };
  return { resolve, asked };
}

/** Calls a lookup function and returns what it answered. */
function lookUp(resolve: Resolver, options: { all?: boolean; family?: number }) {
  return new Promise<{ err: Error | null; address?: unknown; family?: number }>((done) => {
    publicOnlyLookup(resolve, "webhook delivery")(
      "hooks.example",
      options as never,
      ((err: Error | null, address?: unknown, family?: number) => done({ err, address, family })) as never,
    );
  });
}

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** An endpoint at `url` (its secret sealed) and a delivery for it. */
function attemptOf(url: string, timeoutMs = 5000) {
  const box = secretBox("unit-test-key-0123456789");
  const endpoint: StoredWebhookEndpoint = {
    id: crypto.randomUUID(),
    url,
    events: ["job.completed"],
    headers: {},
    description: null,
    active: true,
    maxAttempts: 3,
    timeoutMs,
    retry: { backoff: "fixed", delayMs: 1000, maxDelayMs: 1000, jitter: false },
    secretCipher: "",
    createdAt: new Date(),
    updatedAt: new Date(),
  };
  endpoint.secretCipher = box.seal("whsec_unit_0123456789", endpoint.id);
  const delivery = {
    id: crypto.randomUUID(),
    event: "job.completed" as const,
    payload: { event: "job.completed" as const, timestamp: new Date().toISOString(), data: {}, metadata: {} },
  };
  return { box, endpoint, delivery };
}

/** A local receiver answering with `handle`; closed after the test. */
async function listening(handle: Parameters<typeof createServer>[1]): Promise<number> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

describe("webhooks/rebinding", () => {
  it("webhooks/lookup-hands-only-public-addresses: the connection's lookup answers public addresses and refuses any private one", async () => {
    const v6: LookupAddress = { address: "2606:2800:220:1::1", family: 6 };
    const both: Resolver = async () => [PUBLIC, v6];
    expect(await lookUp(both, { all: true })).toEqual({
      err: null,
      address: [PUBLIC, v6],
      family: undefined,
    });
    expect(await lookUp(both, {})).toEqual({ err: null, address: PUBLIC.address, family: 4 });
    expect(await lookUp(both, { family: 6 })).toEqual({ err: null, address: v6.address, family: 6 });
    for (const answer of [[LOOPBACK], [PUBLIC, LOOPBACK], [{ address: "::ffff:10.0.0.1", family: 6 }], []]) {
      const { err } = await lookUp(async () => answer, { all: true });
      expect(err).toMatchObject({ code: "SONIQ_WEBHOOK_TARGET_REFUSED" });
    }
  });

  it("webhooks/rebinding-refused: a name that turns private between the check and the connection gets no request", async () => {
    let requests = 0;
    const port = await listening((_req, res) => {
      requests++;
      res.end("ok");
    });
    const { box, endpoint, delivery } = attemptOf(`http://rebind.example:${port}/hook`);
    const { resolve, asked } = rebinding([PUBLIC], [LOOPBACK]);
    const outcome = await sendWebhook(endpoint, delivery, {
      secrets: box,
      allowPrivateNetworks: false,
      resolve,
    });
    expect(asked).toEqual(["rebind.example", "rebind.example"]);
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toContain('"rebind.example" resolves to 127.0.0.1');
    expect(requests).toBe(0);

    // The same receiver, named by an address the check allows (private networks allowed): the request arrives,
    // so the refusal above was the lookup's, not an unreachable receiver.
    const direct = { ...endpoint, url: `http://127.0.0.1:${port}/hook` };
    const sent = await sendWebhook(direct, delivery, { secrets: box, allowPrivateNetworks: true, resolve });
    expect(sent).toMatchObject({ ok: true, status: 200, body: "ok", error: null });
    expect(requests).toBe(1);
  });

  it("webhooks/attempt-times-out: a receiver slower than timeoutMs ends the attempt as 'timed out'; an answered attempt leaves no timer", async () => {
    const slow = await listening(() => {}); // never answers
    const late = attemptOf(`http://127.0.0.1:${slow}/slow`, 100);
    expect(
      await sendWebhook(late.endpoint, late.delivery, { secrets: late.box, allowPrivateNetworks: true }),
    ).toEqual({ ok: false, status: null, body: null, error: "timed out" });
    const fast = await listening((_req, res) => res.end("ok"));
    const quick = attemptOf(`http://127.0.0.1:${fast}/fast`, 60_000);
    const timers = () =>
      (process as unknown as { getActiveResourcesInfo(): string[] })
        .getActiveResourcesInfo()
        .filter((r) => r === "Timeout").length;
    const before = timers();
    const sent = await sendWebhook(quick.endpoint, quick.delivery, {
      secrets: quick.box,
      allowPrivateNetworks: true,
    });
    expect(sent).toMatchObject({ ok: true, status: 200 });
    // The 60 s limit of the answered attempt is cleared with it, not left to run out.
    expect(timers()).toBeLessThanOrEqual(before);
  });
});

describe("webhooks/sender-signature", () => {
  it("webhooks/sender-signs-delivery-and-event: the request's v2 signature covers its delivery id and event headers", async () => {
    const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const port = await listening((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
        res.end("ok");
      });
    });
    const { box, endpoint, delivery } = attemptOf(`http://127.0.0.1:${port}/hook`);
    expect(await sendWebhook(endpoint, delivery, { secrets: box, allowPrivateNetworks: true })).toMatchObject(
      {
        ok: true,
      },
    );
    const [request] = received;
    const h = request?.headers ?? {};
    expect(h["x-webhook-delivery"]).toBe(delivery.id);
    expect(h["x-webhook-event"]).toBe("job.completed");
    expect(h["x-webhook-signature"]).toMatch(/^v2=[0-9a-f]{64}$/);
    const check = {
      payload: request?.body ?? "",
      signature: String(h["x-webhook-signature"]),
      timestamp: String(h["x-webhook-timestamp"]),
      deliveryId: String(h["x-webhook-delivery"]),
      event: String(h["x-webhook-event"]),
      secret: "whsec_unit_0123456789",
    };
    expect(verifyWebhookSignature(check)).toBe(true);
    expect(verifyWebhookSignature({ ...check, deliveryId: crypto.randomUUID() })).toBe(false);
    expect(verifyWebhookSignature({ ...check, event: "job.failed" })).toBe(false);
  });
});
