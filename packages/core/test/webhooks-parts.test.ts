/** The pure parts of webhooks: signing and verifying, secrets at rest, which addresses are private. */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSoniqError, type SoniqError, verifyWebhookSignature } from "../src/index.js";
import { secretBox } from "../src/webhooks/secrets.js";
import { signWebhook } from "../src/webhooks/signature.js";
import { isPrivateAddress } from "../src/webhooks/targets.js";

const SECRET = "whsec_unit_0123456789";
const OTHER_SECRET = "whsec_unit_rotated_9876543210";

describe("webhooks/signature", () => {
  const body = JSON.stringify({ event: "job.completed", data: { n: 1 } });
  const now = 1_790_000_000_000;
  const timestamp = String(now / 1000);
  const deliveryId = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
  const event = "job.completed";
  const signed = { timestamp, deliveryId, event, body };
  const hmac = (secret: string) =>
    createHmac("sha256", secret).update(`v2:${timestamp}:${deliveryId}:${event}:${body}`).digest("hex");

  it("webhooks/signature-shape: v2=<hex HMAC-SHA256(secret, 'v2:' + timestamp + ':' + delivery + ':' + event + ':' + body)>", () => {
    expect(signWebhook(SECRET, signed)).toBe(`v2=${hmac(SECRET)}`);
    expect(signWebhook([SECRET, OTHER_SECRET], signed)).toBe(`v2=${hmac(SECRET)},v2=${hmac(OTHER_SECRET)}`);
  });

  it("webhooks/verify: accepts the signature of this body, timestamp, delivery and event, and nothing else", () => {
    const signature = signWebhook(SECRET, signed);
    const base = { payload: body, signature, timestamp, deliveryId, event, secret: SECRET, now };
    expect(verifyWebhookSignature(base)).toBe(true);
    expect(verifyWebhookSignature({ ...base, payload: Buffer.from(body) })).toBe(true);
    expect(verifyWebhookSignature({ ...base, signature: ` ${signature} ` })).toBe(true);
    expect(verifyWebhookSignature({ ...base, payload: `${body} ` })).toBe(false);
    expect(verifyWebhookSignature({ ...base, secret: `${SECRET}x` })).toBe(false);
    expect(verifyWebhookSignature({ ...base, timestamp: String(now / 1000 + 1) })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: signature.slice(0, -1) })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: signature.toUpperCase() })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: undefined })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: "" })).toBe(false);
    expect(verifyWebhookSignature({ ...base, timestamp: "soon" })).toBe(false);
    expect(verifyWebhookSignature({ ...base, deliveryId: undefined })).toBe(false);
    expect(verifyWebhookSignature({ ...base, event: null })).toBe(false);
    expect(verifyWebhookSignature({ ...base, secret: "" })).toBe(false);
    expect(verifyWebhookSignature({ ...base, secret: [] })).toBe(false);
  });

  it("webhooks/verify-delivery-signed: a captured request re-sent with a fresh X-Webhook-Delivery id is refused", () => {
    const signature = signWebhook(SECRET, signed);
    const base = { payload: body, signature, timestamp, deliveryId, event, secret: SECRET, now };
    expect(verifyWebhookSignature(base)).toBe(true);
    expect(verifyWebhookSignature({ ...base, deliveryId: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c" })).toBe(
      false,
    );
    // Moving text between the fields does not make another valid signature.
    expect(verifyWebhookSignature({ ...base, deliveryId: `${deliveryId}:${event}`, event: "" })).toBe(false);
  });

  it("webhooks/verify-event-signed: the same request with another X-Webhook-Event is refused", () => {
    const signature = signWebhook(SECRET, signed);
    const base = { payload: body, signature, timestamp, deliveryId, event, secret: SECRET, now };
    expect(verifyWebhookSignature({ ...base, event: "job.dead_letter" })).toBe(false);
    expect(verifyWebhookSignature({ ...base, event: "webhook.test" })).toBe(false);
  });

  it("webhooks/verify-v1-refused: the unversioned sha256=HMAC(timestamp.body) signature is not accepted", () => {
    const v1 = `sha256=${createHmac("sha256", SECRET).update(`${timestamp}.${body}`).digest("hex")}`;
    const base = { payload: body, timestamp, deliveryId, event, secret: SECRET, now };
    expect(verifyWebhookSignature({ ...base, signature: v1 })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: `v1=${hmac(SECRET)}` })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: `${v1},v2=${hmac(SECRET)}` })).toBe(true);
  });

  it("webhooks/verify-rotation: during a secret rotation a signature by either secret is accepted", () => {
    const base = { payload: body, timestamp, deliveryId, event, now };
    const secrets = [SECRET, OTHER_SECRET] as const;
    // The receiver holds both secrets; the sender signs with the old one, then with the new one, then both.
    expect(verifyWebhookSignature({ ...base, secret: secrets, signature: signWebhook(SECRET, signed) })).toBe(
      true,
    );
    expect(
      verifyWebhookSignature({ ...base, secret: secrets, signature: signWebhook(OTHER_SECRET, signed) }),
    ).toBe(true);
    const both = signWebhook([OTHER_SECRET, SECRET], signed);
    expect(verifyWebhookSignature({ ...base, secret: SECRET, signature: both })).toBe(true);
    expect(verifyWebhookSignature({ ...base, secret: OTHER_SECRET, signature: both })).toBe(true);
    expect(
      verifyWebhookSignature({ ...base, secret: [`${SECRET}x`, "", OTHER_SECRET], signature: both }),
    ).toBe(true);
    // A secret the receiver does not hold still fails, whichever list it comes in.
    expect(
      verifyWebhookSignature({ ...base, secret: [`${SECRET}x`, `${OTHER_SECRET}x`], signature: both }),
    ).toBe(false);
  });

  it("webhooks/verify-tolerance: a timestamp older or newer than toleranceMs is refused (replays)", () => {
    const signature = signWebhook(SECRET, signed);
    const base = { payload: body, signature, timestamp, deliveryId, event, secret: SECRET };
    expect(verifyWebhookSignature({ ...base, now: now + 299_000 })).toBe(true);
    expect(verifyWebhookSignature({ ...base, now: now + 301_000 })).toBe(false);
    expect(verifyWebhookSignature({ ...base, now: now - 301_000 })).toBe(false);
    expect(verifyWebhookSignature({ ...base, now: now + 3_600_000, toleranceMs: 7_200_000 })).toBe(true);
    expect(verifyWebhookSignature({ ...base, now: now + 3_600_000, toleranceMs: 0 })).toBe(true);
  });

  it("webhooks/verify-tolerance-invalid: a NaN, infinite or negative toleranceMs throws SONIQ_INVALID_ARGUMENT", () => {
    const signature = signWebhook(SECRET, signed);
    const base = {
      payload: body,
      signature,
      timestamp,
      deliveryId,
      event,
      secret: SECRET,
      now: now + 3_600_000,
    };
    for (const toleranceMs of [
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -1,
      "300000",
    ]) {
      let thrown: unknown;
      try {
        verifyWebhookSignature({ ...base, toleranceMs: toleranceMs as number });
      } catch (err) {
        thrown = err;
      }
      expect(isSoniqError(thrown, "SONIQ_INVALID_ARGUMENT"), String(toleranceMs)).toBe(true);
      expect((thrown as SoniqError).context).toMatchObject({ field: "toleranceMs" });
    }
  });
});

describe("webhooks/secrets", () => {
  it("webhooks/secret-round-trip: sealed text holds no plain secret, opens with the same key and endpoint only", () => {
    const box = secretBox("an-app-key-of-32-characters-long");
    const sealed = box.seal(SECRET, "endpoint-a");
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(SECRET);
    expect(box.seal(SECRET, "endpoint-a")).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed, "endpoint-a")).toBe(SECRET);
    expect(() => box.open(sealed, "endpoint-b")).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_STATE" }),
    );
    const other = secretBox("another-app-key-32-characters-lo");
    expect(() => other.open(sealed, "endpoint-a")).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_STATE" }),
    );
    const tampered = `${sealed.slice(0, -2)}AA`;
    expect(() => box.open(tampered, "endpoint-a")).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_STATE" }),
    );
  });

  it("webhooks/secret-needs-key: without secretKey, sealing says how to set one", () => {
    expect(() => secretBox(null).seal(SECRET, "e")).toThrow(
      expect.objectContaining({
        code: "SONIQ_INVALID_OPTIONS",
        message: expect.stringContaining("secretKey"),
      }),
    );
  });
});

describe("webhooks/targets", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.9.9.9", true],
    ["10.0.0.8", true],
    ["172.16.4.1", true],
    ["172.32.0.1", false],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["224.0.0.1", true],
    ["::1", true],
    ["::", true],
    ["fd00::1", true],
    ["fe80::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:10.0.0.1", true],
    ["8.8.8.8", false],
    ["93.184.216.34", false],
    ["2606:4700::1111", false],
    ["::ffff:8.8.8.8", false],
    ["not-an-ip", true],
  ])("webhooks/private-address %s -> %s", (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  // Issue 43: an IPv6 address that carries an IPv4 one is judged by the IPv4 it carries.
  it.each([
    ["64:ff9b::7f00:1", true], // NAT64 of 127.0.0.1
    ["64:ff9b::127.0.0.1", true],
    ["64:ff9b::a9fe:a9fe", true], // NAT64 of 169.254.169.254
    ["64:ff9b::808:808", false], // NAT64 of 8.8.8.8
    ["64:ff9b:1::808:808", true], // local-use NAT64 (RFC 8215): a private deployment
    ["2002:7f00:1::1", true], // 6to4 of 127.0.0.1
    ["2002:a00:1::1", true], // 6to4 of 10.0.0.1
    ["2002:0808:0808::1", false], // 6to4 of 8.8.8.8
    ["::127.0.0.1", true], // IPv4-compatible (deprecated): ::/96 is refused whole
    ["::7f00:1", true],
    ["::8.8.8.8", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true], // the form URL parsing gives ::ffff:127.0.0.1
    ["::ffff:808:808", false],
    ["fec0::1", true], // site-local (deprecated)
    ["feff::1", true],
    ["fe80::1%eth0", true],
  ])("webhooks/private-address-embedded-ipv4 %s -> %s", (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});
