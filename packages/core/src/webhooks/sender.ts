/**
 * One attempt of one delivery: POST the stored payload, signed, with a time limit, and say what came of it.
 * The time limit (the endpoint's `timeoutMs`) and the caller's signal cover the whole attempt, the check of
 * the target's addresses included; a port outside `allowedPorts` fails it before anything is looked up or
 * sent. Redirects are not followed (a 3xx is a failure: following one could lead to a private address). The
 * answer's body is read up to 4 kB and kept for operators. Sent with node:http(s) rather than fetch so the
 * connection resolves the host through `publicOnlyLookup` (targets.ts): it connects only to addresses it
 * vetted itself.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { storableText } from "../common/json.js";
import type { Job, WebhookDelivery } from "../common/types.js";
import { SONIQ_VERSION } from "../common/version.js";
import type { DeliveryAttemptResult, StoredWebhookEndpoint } from "../contract/index.js";
import { computeRetryDelay } from "../jobs/retry-policy.js";
import { MAX_WEBHOOK_RETRY_DELAY_MS } from "./input.js";
import type { SecretBox } from "./secrets.js";
import { signWebhook } from "./signature.js";
import {
  assertAllowedPort,
  assertPublicTarget,
  publicOnlyLookup,
  type Resolver,
  systemResolver,
} from "./targets.js";

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
  /** The ports a target may use (`webhooks.allowedPorts`); null or absent: any. */
  allowedPorts?: readonly number[] | null;
  /** Aborts the attempt early (a stopping worker); it then counts as a failed attempt. */
  signal?: AbortSignal;
  /** How host names resolve (default: the system resolver); tests pass their own. */
  resolve?: Resolver;
}

/** The answer's status and up to `MAX_RESPONSE_CHARS` of its body. */
function post(url: URL, options: RequestOptions, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(url, options, (res: IncomingMessage) => {
      let text = "";
      const finish = () => {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, text: storableText(text.slice(0, MAX_RESPONSE_CHARS)) });
      };
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        if (text.length >= MAX_RESPONSE_CHARS) finish();
      });
      res.on("end", finish);
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function message(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { name?: unknown; code?: unknown; message?: unknown } }).cause;
    if (err.name === "TimeoutError" || cause?.name === "TimeoutError") return "timed out";
    if (err.name === "AbortError") return "aborted: the worker stopped";
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

/**
 * `work`, or a rejection as soon as `signal` aborts (a DNS look-up cannot be cancelled: the attempt stops
 * waiting for it instead).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** Sends `payload` (the stored body) to the endpoint, signed; never throws. */
export async function sendWebhook(
  endpoint: StoredWebhookEndpoint,
  delivery: Pick<WebhookDelivery, "id" | "event" | "payload">,
  ctx: SendContext,
): Promise<AttemptOutcome> {
  // The attempt's time limit, from its start (the DNS check included), cleared when it ends: no timer
  // outlives the attempt.
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new DOMException("the attempt timed out", "TimeoutError")),
    endpoint.timeoutMs,
  );
  const signal = ctx.signal === undefined ? timeout.signal : AbortSignal.any([timeout.signal, ctx.signal]);
  try {
    const url = new URL(endpoint.url);
    assertAllowedPort(url, ctx.allowedPorts ?? null, "webhook delivery");
    const resolve = ctx.resolve ?? systemResolver;
    await untilAborted(
      assertPublicTarget(url, ctx.allowPrivateNetworks, "webhook delivery", resolve),
      signal,
    );
    const body = JSON.stringify(delivery.payload);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const secret = ctx.secrets.open(endpoint.secretCipher, endpoint.id);
    const { status, text } = await post(
      url,
      {
        method: "POST",
        signal,
        ...(ctx.allowPrivateNetworks ? {} : { lookup: publicOnlyLookup(resolve, "webhook delivery") }),
        headers: {
          ...endpoint.headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": `Soniq-Webhook/${SONIQ_VERSION}`,
          "x-webhook-event": delivery.event,
          "x-webhook-delivery": delivery.id,
          "x-webhook-timestamp": timestamp,
          "x-webhook-signature": signWebhook(secret, {
            timestamp,
            deliveryId: delivery.id,
            event: delivery.event,
            body,
          }),
        },
      },
      body,
    );
    const ok = status >= 200 && status < 300;
    return { ok, status, body: text, error: ok ? null : `HTTP ${status}` };
  } catch (err) {
    // An abort surfaces as whichever error the request or the answer's stream saw first: say why it stopped.
    const error = timeout.signal.aborted
      ? "timed out"
      : ctx.signal?.aborted
        ? "aborted: the worker stopped"
        : message(err);
    return { ok: false, status: null, body: null, error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The stored result of attempt `delivery.attempts`: delivered, retried after the endpoint's `retry` delay
 * (at most `MAX_WEBHOOK_RETRY_DELAY_MS`, also for an endpoint stored before that ceiling), or failed when it
 * was the last of `maxAttempts`.
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
  const delayMs = Math.min(MAX_WEBHOOK_RETRY_DELAY_MS, Math.max(0, Math.round(delay ?? 0)));
  return { ...base, status: "pending", delayMs };
}
