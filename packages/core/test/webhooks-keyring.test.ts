/**
 * Endpoint secrets under a keyring (issue 43): `webhooks.secretKey` takes `{ current, keys }`; new secrets are
 * sealed `v2.<keyId>...` under the current key, `v1` secrets (one key) stay readable, a secret names the key
 * that opens it (an unknown id is the typed wrong-key error), bad keyrings are refused with the field named;
 * `webhooks.reseal()` re-seals every stored secret not under the current key, audited, without undoing a
 * rotation made meanwhile, and the re-sealed endpoint still delivers signed with its own secret.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isSoniqError, Soniq, verifyWebhookSignature } from "../src/index.js";
import { secretBox } from "../src/webhooks/secrets.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { caught, rejection } from "./support.js";

const app = memoryApps();
const K1 = "old-secret-key-0123456789abcdef";
const K2 = "new-secret-key-fedcba9876543210";
const HOOK_SECRET = "whsec_keyring_0123456789";
const ENDPOINT = "0193c6e2-0000-7000-8000-000000000001";

/** The typed error a value no key opens gives: `SONIQ_INVALID_STATE`, naming the endpoint (and the key id). */
function undecryptable(fn: () => unknown, keyId: string | null): void {
  const err = caught(fn);
  expect(isSoniqError(err, "SONIQ_INVALID_STATE"), String(err)).toBe(true);
  expect((err as { context: unknown }).context).toEqual({ endpointId: ENDPOINT, keyId });
  expect((err as Error).message).toContain(`webhook endpoint ${ENDPOINT} cannot be decrypted`);
  for (const key of [K1, K2]) expect((err as Error).message).not.toContain(key);
}

describe("webhooks/keyring: sealing and opening", () => {
  const ring = { current: "k2", keys: { k1: K1, k2: K2 } };

  it("webhooks/keyring-seals-under-current: a keyring seals v2 under its current key and opens it; a single key still seals v1", () => {
    const box = secretBox(ring);
    const sealed = box.seal(HOOK_SECRET, ENDPOINT);
    expect(sealed).toMatch(/^v2\.k2\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(HOOK_SECRET);
    expect(box.open(sealed, ENDPOINT)).toBe(HOOK_SECRET);
    expect([box.currentKeyId, box.keyIdOf(sealed), box.isCurrent(sealed)]).toEqual(["k2", "k2", true]);
    // The key the value names opens it, not the ring's current one: a v2 under k1 opens too.
    const underK1 = secretBox({ current: "k1", keys: { k1: K1 } }).seal(HOOK_SECRET, ENDPOINT);
    expect(underK1).toMatch(/^v2\.k1\./);
    expect(box.open(underK1, ENDPOINT)).toBe(HOOK_SECRET);
    expect(box.isCurrent(underK1)).toBe(false);
    const single = secretBox(K1);
    const v1 = single.seal(HOOK_SECRET, ENDPOINT);
    expect(v1).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect([single.currentKeyId, single.keyIdOf(v1), single.isCurrent(v1)]).toEqual([null, null, true]);
  });

  it("webhooks/keyring-opens-v1: a v1 secret (sealed under a single key) opens with the keyring that holds that key, whatever its id", () => {
    const v1 = secretBox(K1).seal(HOOK_SECRET, ENDPOINT);
    const box = secretBox(ring);
    expect(box.open(v1, ENDPOINT)).toBe(HOOK_SECRET);
    expect([box.keyIdOf(v1), box.isCurrent(v1)]).toEqual([null, false]);
    expect(secretBox({ current: "old", keys: { old: K1 } }).open(v1, ENDPOINT)).toBe(HOOK_SECRET);
    // A keyring without that key: the wrong-key error, as a single other key gives it.
    undecryptable(() => secretBox({ current: "k2", keys: { k2: K2 } }).open(v1, ENDPOINT), null);
    undecryptable(() => secretBox(K2).open(v1, ENDPOINT), null);
  });

  it("webhooks/keyring-unknown-key-id: a secret sealed under a key id the keyring lacks (or under a keyring, opened with a single key) is the same typed error, naming the id", () => {
    const v2 = secretBox(ring).seal(HOOK_SECRET, ENDPOINT);
    const err = caught(() => secretBox({ current: "k1", keys: { k1: K1 } }).open(v2, ENDPOINT));
    expect((err as Error).message).toContain('sealed under key "k2"');
    undecryptable(() => secretBox({ current: "k1", keys: { k1: K1 } }).open(v2, ENDPOINT), "k2");
    undecryptable(() => secretBox(K2).open(v2, ENDPOINT), "k2");
    // The right key id with another key behind it, a value moved to another endpoint, and junk: the same error.
    undecryptable(() => secretBox({ current: "k2", keys: { k2: K1 } }).open(v2, ENDPOINT), "k2");
    const elsewhere = secretBox(ring).seal(HOOK_SECRET, "0193c6e2-0000-7000-8000-000000000002");
    undecryptable(() => secretBox(ring).open(elsewhere, ENDPOINT), "k2");
    undecryptable(() => secretBox(ring).open("v3.k2.a.b.c", ENDPOINT), null);
  });

  it("webhooks/keyring-options-refused: a bad keyring or pendingMaxAgeMs is SONIQ_INVALID_OPTIONS naming the field, and no message quotes a key", () => {
    const cases: [unknown, string][] = [
      ["too-short", "webhooks.secretKey"],
      [["k1", K1], "webhooks.secretKey"],
      [{ current: "k1", keys: { k1: K1 }, previous: "k0" }, "webhooks.secretKey"],
      [{ current: "k1" }, "webhooks.secretKey.keys"],
      [{ current: "k1", keys: {} }, "webhooks.secretKey.keys"],
      [{ current: "k1", keys: { k1: "short-key" } }, "webhooks.secretKey.keys"],
      [{ current: "k1", keys: { k1: 12345678 } }, "webhooks.secretKey.keys"],
      [{ current: "a.b", keys: { "a.b": K1 } }, "webhooks.secretKey.keys"],
      [{ current: "k3", keys: { k1: K1, k2: K2 } }, "webhooks.secretKey.current"],
      [{ keys: { k1: K1 } }, "webhooks.secretKey.current"],
    ];
    for (const [secretKey, field] of cases) {
      const err = caught(
        () => new Soniq({ backend: memoryBackend(), webhooks: { secretKey: secretKey as string } }),
      );
      expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS"), JSON.stringify(secretKey)).toBe(true);
      const context = (err as { context: { field: unknown; fields: unknown } }).context;
      expect(context.field, JSON.stringify(secretKey)).toBe(field);
      expect((err as Error).message).not.toContain(K1);
    }
    const both = caught(
      () =>
        new Soniq({
          backend: memoryBackend(),
          webhooks: { secretKey: { current: "k1", keys: {} }, pendingMaxAgeMs: 1000 },
        }),
    );
    expect((both as { context: { fields: unknown } }).context.fields).toEqual([
      "webhooks.secretKey.keys",
      "webhooks.pendingMaxAgeMs",
    ]);
    // A keyring is copied and frozen: changing the caller's object later changes nothing.
    const given = { current: "k2", keys: { k1: K1, k2: K2 } as Record<string, string> };
    const soniq = app({ webhooks: { secretKey: given } });
    given.keys.k2 = "replaced-after-construction-0000";
    given.current = "k1";
    expect(soniq.options.webhooks.secretKey).toEqual({ current: "k2", keys: { k1: K1, k2: K2 } });
    expect(Object.isFrozen((soniq.options.webhooks.secretKey as { keys: object }).keys)).toBe(true);
  });
});

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A local receiver answering 200 and keeping what it was sent. */
async function receiver(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.end("ok");
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

const signedWith = (r: Received, secret: string) =>
  verifyWebhookSignature({
    payload: r.body,
    signature: String(r.headers["x-webhook-signature"]),
    timestamp: String(r.headers["x-webhook-timestamp"]),
    deliveryId: String(r.headers["x-webhook-delivery"]),
    event: String(r.headers["x-webhook-event"]),
    secret,
  });

describe("webhooks/reseal", () => {
  const rotated = { current: "k2", keys: { k1: K1, k2: K2 } };

  it("webhooks/reseal-rotates: an endpoint sealed under the old key is re-sealed under k2 (dry run first, audited), then delivers signed with its secret from a worker holding only k2", async () => {
    const backend = memoryBackend();
    const before = app({ webhooks: { secretKey: K1, allowPrivateNetworks: true } }, backend);
    await before.setup();
    const hook = await receiver();
    const single = await before.webhooks.register({
      url: hook.url,
      events: ["job.completed"],
      secret: HOOK_SECRET,
    });
    const underK1 = app(
      { webhooks: { secretKey: { current: "k1", keys: { k1: K1 } }, allowPrivateNetworks: true } },
      backend,
    );
    const ringed = await underK1.webhooks.register({
      url: hook.url,
      events: ["job.failed"],
      secret: "whsec_second_0123456789",
    });
    const cipher = async (id: string) => (await backend.webhooks.getEndpoint(id))?.secretCipher ?? "";
    const [singleCipher, ringedCipher] = [await cipher(single.id), await cipher(ringed.id)];
    expect([singleCipher.slice(0, 3), ringedCipher.slice(0, 6)]).toEqual(["v1.", "v2.k1."]);

    const soniq = app({ webhooks: { secretKey: rotated, allowPrivateNetworks: true } }, backend);
    const dry = await soniq.webhooks.reseal({ dryRun: true, actor: "ops" });
    expect(dry).toEqual({
      keyId: "k2",
      resealed: [single.id, ringed.id],
      alreadyCurrent: 0,
      failed: [],
      dryRun: true,
    });
    expect([await cipher(single.id), await cipher(ringed.id)]).toEqual([singleCipher, ringedCipher]);
    const done = await soniq.webhooks.reseal({ actor: "ops" });
    expect(done).toEqual({ ...dry, dryRun: false });
    expect(await cipher(single.id)).toMatch(/^v2\.k2\./);
    expect(await cipher(ringed.id)).toMatch(/^v2\.k2\./);
    expect(await soniq.webhooks.reseal()).toMatchObject({ resealed: [], alreadyCurrent: 2, failed: [] });
    const audit = (await soniq.audit.list({ action: "webhook.reseal" })).map((e) => [
      e.actor,
      e.target,
      e.outcome,
      e.params,
    ]);
    expect(audit).toEqual([
      ["ops", ringed.id, "ok", { fromKeyId: "k1", toKeyId: "k2" }],
      ["ops", single.id, "ok", { fromKeyId: null, toKeyId: "k2" }],
      ["ops", ringed.id, "dry_run", { fromKeyId: "k1", toKeyId: "k2" }],
      ["ops", single.id, "dry_run", { fromKeyId: null, toKeyId: "k2" }],
    ]);
    expect(JSON.stringify(audit)).not.toContain(HOOK_SECRET);

    // k1 can go: a worker holding only k2 delivers, signed with the endpoint's own secret.
    const after = app(
      { webhooks: { secretKey: { current: "k2", keys: { k2: K2 } }, allowPrivateNetworks: true } },
      backend,
    );
    after.job("keyring.ok", async () => 1);
    await after.jobs.enqueue("keyring.ok", {});
    await after.worker().runOnce();
    expect(hook.received).toHaveLength(1);
    expect(signedWith(hook.received[0] as Received, HOOK_SECRET)).toBe(true);
    expect((await after.webhooks.deliveries({ endpointId: single.id }))[0]?.status).toBe("delivered");
    // The old single key alone no longer opens it: nothing is sent, the typed error names the key id.
    const test = await before.webhooks.test(single.id);
    expect([test?.ok, test?.status]).toEqual([false, null]);
    expect(test?.error).toContain('sealed under key "k2"');
    expect(hook.received).toHaveLength(1);
  });

  it("webhooks/reseal-reports-unopenable: a secret no key of the ring opens is left as it is, listed in failed and audited failed; the others are re-sealed", async () => {
    const backend = memoryBackend();
    await app({}, backend).setup();
    const lostId = await storedEndpoint(backend, secretBox({ current: "k9", keys: { k9: K1 } }));
    const soniq = app({ webhooks: { secretKey: rotated } }, backend);
    const result = await soniq.webhooks.reseal({ actor: "ops" });
    expect(result.resealed).toEqual([]);
    expect(result.failed).toEqual([
      { endpointId: lostId, keyId: "k9", error: expect.stringContaining('key "k9"') },
    ]);
    expect((await backend.webhooks.getEndpoint(lostId))?.secretCipher).toMatch(/^v2\.k9\./);
    const [row] = await soniq.audit.list({ action: "webhook.reseal" });
    expect(row).toMatchObject({
      target: lostId,
      outcome: "failed",
      params: { fromKeyId: "k9", toKeyId: "k2" },
    });
    expect(await rejection(soniq.webhooks.reseal({ dryRun: "yes" as unknown as boolean }))).toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    expect(await rejection(app().webhooks.reseal())).toMatchObject({ code: "SONIQ_INVALID_OPTIONS" });
  });

  it("webhooks/reseal-keeps-a-rotation: a secret rotated between the re-seal's read and its write is not overwritten with the old one", async () => {
    const base = memoryBackend();
    const before = app({ webhooks: { secretKey: K1 } }, base);
    await before.setup();
    const id = await storedEndpoint(base, secretBox(K1));
    const rotatedSecret = "whsec_rotated_meanwhile_0123";
    let soniq: Soniq | null = null;
    let raced = false;
    const backend = overriding(base, "webhooks", {
      updateEndpoint: async (...args: Parameters<typeof base.webhooks.updateEndpoint>) => {
        if (!raced && args[2].action === "webhook.reseal") {
          raced = true; // an operator rotates the secret just before the re-seal's write lands
          await soniq?.webhooks.update(id, { secret: rotatedSecret }, { actor: "rotator" });
        }
        return base.webhooks.updateEndpoint(...args);
      },
    });
    soniq = app({ webhooks: { secretKey: rotated } }, backend);
    const result = await soniq.webhooks.reseal({ actor: "ops" });
    expect(raced).toBe(true);
    // The guarded write missed; read again, the rotated secret was already sealed under k2.
    expect(result).toMatchObject({ resealed: [], alreadyCurrent: 1, failed: [] });
    const stored = (await base.webhooks.getEndpoint(id))?.secretCipher ?? "";
    expect(secretBox(rotated).open(stored, id)).toBe(rotatedSecret);
    expect((await soniq.audit.list({ action: "webhook.reseal" })).length).toBe(0);
  });
});

/** Writes an endpoint whose secret `box` sealed straight to the backend (no DNS look-up); its id. */
async function storedEndpoint(
  backend: ReturnType<typeof memoryBackend>,
  box: ReturnType<typeof secretBox>,
): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date();
  await backend.webhooks.createEndpoint(
    {
      id,
      url: "https://hooks.example.com/stored",
      events: ["job.failed"],
      headers: {},
      description: null,
      active: true,
      maxAttempts: 3,
      timeoutMs: 5000,
      retry: { backoff: "exponential", delayMs: 1000, maxDelayMs: 60_000, jitter: true },
      secretCipher: box.seal(HOOK_SECRET, id),
      createdAt: now,
      updatedAt: now,
    },
    {
      id: crypto.randomUUID(),
      actor: "kit",
      action: "webhook.register",
      target: id,
      params: null,
      outcome: "ok",
      details: null,
    },
  );
  return id;
}
