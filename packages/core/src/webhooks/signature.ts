/**
 * Signing and verifying webhook requests. The signature covers the timestamp and the exact body bytes:
 * `X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`, with the timestamp (unix
 * seconds) sent as `X-Webhook-Timestamp`. Signing the timestamp lets a receiver refuse a replayed request
 * older than its tolerance (upstream signed the body only).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The signature header's value for `body` sent at `timestamp` (unix seconds, as a string). */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")}`;
}

export interface VerifyWebhookSignatureInput {
  /** The raw request body, exactly as received (a string or its bytes). Parse it only after verifying. */
  payload: string | Uint8Array;
  /** The `X-Webhook-Signature` header (`sha256=<hex>`). */
  signature: string | null | undefined;
  /** The `X-Webhook-Timestamp` header (unix seconds). */
  timestamp: string | number | null | undefined;
  /** The endpoint's secret. */
  secret: string;
  /** How far the timestamp may be from now, either way (default 300000, 5 min; 0 skips the check). */
  toleranceMs?: number;
  /** Now, in ms since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

export const DEFAULT_SIGNATURE_TOLERANCE_MS = 300_000;

/**
 * True when `signature` is the endpoint's signature of `timestamp` and `payload` and the timestamp is within
 * `toleranceMs` of now. The comparison is constant-time. Never throws for a malformed header (false).
 */
export function verifyWebhookSignature(input: VerifyWebhookSignatureInput): boolean {
  const { payload, signature, timestamp, secret } = input;
  if (typeof signature !== "string" || typeof secret !== "string" || secret.length === 0) return false;
  const stamp = typeof timestamp === "number" ? String(timestamp) : timestamp;
  if (typeof stamp !== "string" || !/^\d{1,15}$/.test(stamp)) return false;
  const tolerance = input.toleranceMs ?? DEFAULT_SIGNATURE_TOLERANCE_MS;
  if (tolerance > 0 && Math.abs((input.now ?? Date.now()) - Number(stamp) * 1000) > tolerance) return false;
  const body = typeof payload === "string" ? Buffer.from(payload) : Buffer.from(payload);
  const expected = Buffer.from(
    `sha256=${createHmac("sha256", secret).update(`${stamp}.`).update(body).digest("hex")}`,
  );
  const given = Buffer.from(signature.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
