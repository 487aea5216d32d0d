/**
 * One attempt of one delivery: POST the stored payload, signed, with a time limit, and say what came of it.
 * Redirects are not followed (a 3xx is a failure: following one could lead to a private address). The
 * answer's body is read up to 4 kB and kept for operators.
 */
import type { DeliveryAttemptResult, StoredWebhookEndpoint } from "../contract/index.js";
import { storableText } from "../json.js";
import { computeRetryDelay } from "../retry-policy.js";
import type { Job, WebhookDelivery } from "../types.js";
import { SONIQ_VERSION } from "../version.js";
import type { SecretBox } from "./secrets.js";
import { signWebhook } from "./signature.js";
import { assertPublicTarget } from "./targets.js";

const MAX_RESPONSE_CHARS = 4096;

/** What an HTTP attempt came to. */
export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  body: string | null;
  error: string | null;
}

export interface SendContext {
  secrets: SecretBox;
  allowPrivateNetworks: boolean;
  /** Aborts the attempt early (a stopping worker); it then counts as a failed attempt. */
  signal?: AbortSignal;
}

async function readSome(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < MAX_RESPONSE_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return storableText(text.slice(0, MAX_RESPONSE_CHARS));
}

function message(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return "timed out";
    if (err.name === "AbortError") return "aborted: the worker stopped";
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
    const detail =
      typeof cause?.code === "string"
        ? cause.code
        : typeof cause?.message === "string"
          ? cause.message
          : null;
    return storableText(detail === null ? err.message : `${err.message}: ${detail}`);
  }
  return storableText(String(err));
}

/** Sends `payload` (the stored body) to the endpoint, signed; never throws. */
export async function sendWebhook(
  endpoint: StoredWebhookEndpoint,
  delivery: Pick<WebhookDelivery, "id" | "event" | "payload">,
  ctx: SendContext,
): Promise<AttemptOutcome> {
  try {
    const url = new URL(endpoint.url);
    await assertPublicTarget(url, ctx.allowPrivateNetworks, "webhook delivery");
    const body = JSON.stringify(delivery.payload);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const secret = ctx.secrets.open(endpoint.secretCipher, endpoint.id);
    const res = await fetch(url, {
      method: "POST",
      redirect: "manual",
      signal:
        ctx.signal === undefined
          ? AbortSignal.timeout(endpoint.timeoutMs)
          : AbortSignal.any([AbortSignal.timeout(endpoint.timeoutMs), ctx.signal]),
      headers: {
        ...endpoint.headers,
        "content-type": "application/json",
        "user-agent": `Soniq-Webhook/${SONIQ_VERSION}`,
        "x-webhook-event": delivery.event,
        "x-webhook-delivery": delivery.id,
        "x-webhook-timestamp": timestamp,
        "x-webhook-signature": signWebhook(secret, timestamp, body),
      },
      body,
    });
    const text = await readSome(res);
    const ok = res.status >= 200 && res.status < 300;
    return { ok, status: res.status, body: text, error: ok ? null : `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, status: null, body: null, error: message(err) };
  }
}

/**
 * The stored result of attempt `delivery.attempts`: delivered, retried after the endpoint's `retry` delay,
 * or failed when it was the last of `maxAttempts`.
 */
export function attemptResult(
  endpoint: StoredWebhookEndpoint | undefined,
  delivery: WebhookDelivery,
  outcome: AttemptOutcome,
): DeliveryAttemptResult {
  const base = {
    id: delivery.id,
    attempt: delivery.attempts,
    lastError: outcome.error,
    responseStatus: outcome.status,
    responseBody: outcome.body,
  };
  if (outcome.ok) return { ...base, status: "delivered", delayMs: 0 };
  if (delivery.attempts >= delivery.maxAttempts || endpoint === undefined) {
    return { ...base, status: "failed", delayMs: 0 };
  }
  const delay = computeRetryDelay(endpoint.retry, {
    attempt: delivery.attempts,
    maxAttempts: delivery.maxAttempts,
    error: outcome.error,
    job: null as unknown as Job,
  });
  return { ...base, status: "pending", delayMs: Math.max(0, Math.round(delay ?? 0)) };
}
