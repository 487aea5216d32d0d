/**
 * Signing and verifying webhook requests, scheme `v2`. The signature covers the timestamp, the delivery id,
 * the event and the exact body bytes:
 *
 *   X-Webhook-Signature: v2=<hex HMAC-SHA256(secret, "v2:" + timestamp + ":" + delivery id + ":" + event + ":" + body)>
 *
 * with the timestamp (unix seconds) in `X-Webhook-Timestamp`, the delivery id in `X-Webhook-Delivery` and the
 * event in `X-Webhook-Event`. Signing the timestamp lets a receiver refuse a request older than its tolerance;
 * signing the delivery id and the event means a captured request cannot be re-sent within the tolerance under
 * a fresh delivery id (which a receiver deduplicating on that id would accept) or as another event. The
 * version is both in the header (`v2=`) and in the signed text, so a signature of another scheme never
 * verifies as this one. The header may carry several comma-separated `v2=` entries (one per secret, while a
 * secret is being rotated); the request verifies when any entry matches any of the receiver's secrets.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { SoniqError } from "../common/errors.js";

/** The scheme this module signs and the only one it verifies. */
const SCHEME = "v2";
const HEX_DIGEST = /^[0-9a-f]{64}$/;

/** What a signature covers, as the request carries it. */
export interface SignedWebhookContent {
  /** Unix seconds, as sent in `X-Webhook-Timestamp`. */
  timestamp: string;
  /** The `X-Webhook-Delivery` header. */
  deliveryId: string;
  /** The `X-Webhook-Event` header. */
  event: string;
  /** The exact request body. */
  body: string | Uint8Array;
}

function digest(secret: string, content: SignedWebhookContent): string {
  return createHmac("sha256", secret)
    .update(`${SCHEME}:${content.timestamp}:${content.deliveryId}:${content.event}:`)
    .update(content.body)
    .digest("hex");
}

/** The `X-Webhook-Signature` value for `content`: one `v2=<hex>` entry per secret, comma-separated. */
export function signWebhook(secrets: string | readonly string[], content: SignedWebhookContent): string {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  return list.map((secret) => `${SCHEME}=${digest(secret, content)}`).join(",");
}

export interface VerifyWebhookSignatureInput {
  /** The raw request body, exactly as received (a string or its bytes). Parse it only after verifying. */
  payload: string | Uint8Array;
  /** The `X-Webhook-Signature` header (`v2=<hex>`, possibly several comma-separated). */
  signature: string | null | undefined;
  /** The `X-Webhook-Timestamp` header (unix seconds). */
  timestamp: string | number | null | undefined;
  /** The `X-Webhook-Delivery` header: the id a receiver deduplicates on is checked to be the one signed. */
  deliveryId: string | null | undefined;
  /** The `X-Webhook-Event` header, checked to be the one signed. */
  event: string | null | undefined;
  /**
   * The endpoint's secret, or several while rotating it (the current and the next): a signature by any of them
   * is accepted. Empty strings are ignored.
   */
  secret: string | readonly string[];
  /**
   * How far the timestamp may be from now, either way: a finite number of ms of at least 0 (default 300000,
   * 5 min; 0 skips the check). Anything else throws `SONIQ_INVALID_ARGUMENT`.
   */
  toleranceMs?: number;
  /** Now, in ms since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

export const DEFAULT_SIGNATURE_TOLERANCE_MS = 300_000;

/** A header value that can be one field of the signed text: non-empty, without the separator or a line break. */
function field(value: string | null | undefined): value is string {
  return typeof value === "string" && value.length > 0 && !/[:\r\n]/.test(value);
}

/** The hex digests of the header's `v2=` entries; entries of other schemes (`sha256=`, `v1=`) are skipped. */
function givenDigests(header: string): Buffer[] {
  const out: Buffer[] = [];
  for (const entry of header.split(",")) {
    const [scheme, value] = entry.trim().split("=", 2);
    if (scheme === SCHEME && value !== undefined && HEX_DIGEST.test(value)) out.push(Buffer.from(value));
  }
  return out;
}

/**
 * True when `signature` holds a `v2` signature, by one of `secret`, of `timestamp`, `deliveryId`, `event` and
 * `payload`, and the timestamp is within `toleranceMs` of now. Comparisons are constant-time. A malformed or
 * missing header gives false; a `toleranceMs` that is not a finite number of at least 0 throws
 * `SONIQ_INVALID_ARGUMENT` (a mistake in the receiver's code, which must not turn the time check off).
 */
export function verifyWebhookSignature(input: VerifyWebhookSignatureInput): boolean {
  const tolerance = input.toleranceMs ?? DEFAULT_SIGNATURE_TOLERANCE_MS;
  if (typeof tolerance !== "number" || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `verifyWebhookSignature({ toleranceMs }) must be a finite number of ms of at least 0 (0 skips the time check), got ${String(tolerance)}.`,
      { context: { field: "toleranceMs", value: tolerance } },
    );
  }
  const { payload, signature, timestamp, deliveryId, event } = input;
  const secrets = (
    typeof input.secret === "string" ? [input.secret] : Array.isArray(input.secret) ? input.secret : []
  ).filter((s): s is string => typeof s === "string" && s.length > 0);
  if (typeof signature !== "string" || secrets.length === 0) return false;
  if (!field(deliveryId) || !field(event)) return false;
  const stamp = typeof timestamp === "number" ? String(timestamp) : timestamp;
  if (typeof stamp !== "string" || !/^\d{1,15}$/.test(stamp)) return false;
  if (tolerance > 0 && Math.abs((input.now ?? Date.now()) - Number(stamp) * 1000) > tolerance) return false;
  const given = givenDigests(signature);
  if (given.length === 0) return false;
  const content = { timestamp: stamp, deliveryId, event, body: payload };
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(digest(secret, content));
    // Every pair is compared (no early exit), so the time taken says nothing about which entry matched.
    for (const candidate of given) matched = timingSafeEqual(candidate, expected) || matched;
  }
  return matched;
}
