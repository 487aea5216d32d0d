/** The pure parts of webhooks: signing and verifying, secrets at rest, which addresses are private. */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhookSignature } from "../src/index.js";
import { secretBox } from "../src/webhooks/secrets.js";
import { signWebhook } from "../src/webhooks/signature.js";
import { isPrivateAddress } from "../src/webhooks/targets.js";

const SECRET = "whsec_unit_0123456789";

describe("webhooks/signature", () => {
  const body = JSON.stringify({ event: "job.completed", data: { n: 1 } });
  const now = 1_790_000_000_000;
  const timestamp = String(now / 1000);

  it("webhooks/signature-shape: sha256=<hex HMAC-SHA256(secret, timestamp + '.' + body)>", () => {
    const expected = createHmac("sha256", SECRET).update(`${timestamp}.${body}`).digest("hex");
    expect(signWebhook(SECRET, timestamp, body)).toBe(`sha256=${expected}`);
  });

  it("webhooks/verify: accepts the signature of this body and timestamp, and nothing else", () => {
    const signature = signWebhook(SECRET, timestamp, body);
    const base = { payload: body, signature, timestamp, secret: SECRET, now };
    expect(verifyWebhookSignature(base)).toBe(true);
    expect(verifyWebhookSignature({ ...base, payload: Buffer.from(body) })).toBe(true);
    expect(verifyWebhookSignature({ ...base, payload: `${body} ` })).toBe(false);
    expect(verifyWebhookSignature({ ...base, secret: `${SECRET}x` })).toBe(false);
    expect(verifyWebhookSignature({ ...base, timestamp: String(now / 1000 + 1) })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: signature.slice(0, -1) })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: undefined })).toBe(false);
    expect(verifyWebhookSignature({ ...base, timestamp: "soon" })).toBe(false);
  });

  it("webhooks/verify-tolerance: a timestamp older or newer than toleranceMs is refused (replays)", () => {
    const signature = signWebhook(SECRET, timestamp, body);
    const base = { payload: body, signature, timestamp, secret: SECRET };
    expect(verifyWebhookSignature({ ...base, now: now + 299_000 })).toBe(true);
    expect(verifyWebhookSignature({ ...base, now: now + 301_000 })).toBe(false);
    expect(verifyWebhookSignature({ ...base, now: now - 301_000 })).toBe(false);
    expect(verifyWebhookSignature({ ...base, now: now + 3_600_000, toleranceMs: 7_200_000 })).toBe(true);
    expect(verifyWebhookSignature({ ...base, now: now + 3_600_000, toleranceMs: 0 })).toBe(true);
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
});
