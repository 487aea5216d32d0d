/**
 * `webhooks.register(input)` and `update(id, patch)`: every field checked here, once, before anything is
 * written (`SONIQ_INVALID_ARGUMENT`, naming the field in `context.field`). The URL's target is checked
 * separately (targets.ts), since it resolves the host.
 */
import { SoniqError } from "../common/errors.js";
import { storableText } from "../common/json.js";
import { WEBHOOK_EVENTS, type WebhookEvent, type WebhookRetry } from "../common/types.js";
import { retryPolicyProblems } from "../jobs/retry-policy.js";
import { parseWebhookUrl } from "./targets.js";

/** What `register` takes. */
export interface WebhookRegistration {
  /** An http(s) URL on a public address (unless `allowPrivateNetworks`). */
  url: string;
  /** The events to receive, at least one (see `WEBHOOK_EVENTS`). */
  events: readonly WebhookEvent[];
  /** The HMAC key requests are signed with (16 to 512 characters). Stored encrypted; never returned. */
  secret: string;
  /** Extra request headers (not `X-Webhook-*`, `Content-Type`, `Content-Length`, `Host`). */
  headers?: Record<string, string>;
  description?: string | null;
  /** Default true. */
  active?: boolean;
  /** Attempts per delivery, first included (1..100). Default 5. */
  maxAttempts?: number;
  /** Per-attempt time limit (100..120000 ms). Default 10000. */
  timeoutMs?: number;
  /**
   * Delay between attempts. Default exponential from 10 s, capped at 10 min, full jitter. No delay may exceed
   * 24 h (`MAX_WEBHOOK_RETRY_DELAY_MS`): every entry of `delaysMs`, and `delayMs` and `maxDelayMs`.
   */
  retry?: WebhookRetry;
}

/** What `update` takes: any field of a registration; an omitted one keeps its value. */
export type WebhookUpdate = Partial<WebhookRegistration>;

export const DEFAULT_WEBHOOK_RETRY: WebhookRetry = Object.freeze({
  backoff: "exponential",
  delayMs: 10_000,
  maxDelayMs: 600_000,
  jitter: true,
});
export const DEFAULT_WEBHOOK_MAX_ATTEMPTS = 5;
/** The longest an endpoint may wait between two attempts (24 h), so a delivery's retries end in days, not years. */
export const MAX_WEBHOOK_RETRY_DELAY_MS = 86_400_000;
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

const KEYS = [
  "url",
  "events",
  "secret",
  "headers",
  "description",
  "active",
  "maxAttempts",
  "timeoutMs",
  "retry",
] as const;

const RESERVED_HEADERS = ["content-type", "content-length", "host", "user-agent", "transfer-encoding"];
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;

function bad(what: string, field: string, message: string): SoniqError {
  return new SoniqError("SONIQ_INVALID_ARGUMENT", `${what}.${field}: ${message}`, { context: { field } });
}

function events(value: unknown, what: string): WebhookEvent[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw bad(what, "events", `expected a non-empty array of ${WEBHOOK_EVENTS.join(", ")}`);
  }
  const unknown = value.find((e) => !(WEBHOOK_EVENTS as readonly unknown[]).includes(e));
  if (unknown !== undefined) {
    throw bad(
      what,
      "events",
      `unknown event ${JSON.stringify(unknown)}; events are ${WEBHOOK_EVENTS.join(", ")}`,
    );
  }
  return [...new Set(value as WebhookEvent[])];
}

function secret(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length < 16 || value.length > 512 || storableText(value) !== value) {
    throw bad(what, "secret", "expected a string of 16 to 512 characters");
  }
  return value;
}

function headers(value: unknown, what: string): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw bad(what, "headers", "expected an object of header names to string values");
  }
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name) || lower.startsWith("x-webhook-") || RESERVED_HEADERS.includes(lower)) {
      throw bad(what, "headers", `"${name}" is not a header an endpoint may set`);
    }
    if (typeof v !== "string" || v.length > 4096 || /[\r\n\0]/.test(v)) {
      throw bad(what, "headers", `the value of "${name}" must be a string without line breaks`);
    }
    out[name] = v;
  }
  if (Object.keys(out).length > 50) throw bad(what, "headers", "at most 50 headers");
  return out;
}

function int(value: unknown, what: string, field: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw bad(what, field, `expected an integer from ${min} to ${max}`);
  }
  return value;
}

function retry(value: unknown, what: string): WebhookRetry {
  if (typeof value === "function") {
    throw bad(
      what,
      "retry",
      "a function cannot be stored; use { backoff, delayMs, maxDelayMs, jitter } or { delaysMs }",
    );
  }
  const problems = retryPolicyProblems(value, `${what}.retry`);
  if (problems.length > 0) throw bad(what, "retry", problems.join("; "));
  const r = value as Record<string, unknown>;
  const tooLong = (delays: unknown[]) => {
    if (delays.some((d) => (d as number) > MAX_WEBHOOK_RETRY_DELAY_MS)) {
      throw bad(what, "retry", `no delay may exceed ${MAX_WEBHOOK_RETRY_DELAY_MS} ms (24 h)`);
    }
  };
  if ("delaysMs" in r) {
    tooLong(r.delaysMs as number[]);
    return { delaysMs: [...(r.delaysMs as number[])] };
  }
  const extra = Object.keys(r).find((k) => !["backoff", "delayMs", "maxDelayMs", "jitter"].includes(k));
  if (extra !== undefined) throw bad(what, "retry", `unknown key "${extra}"`);
  tooLong([r.delayMs, r.maxDelayMs]);
  return { ...(r as WebhookRetry) };
}

function description(value: unknown, what: string): string | null {
  if (value === null) return null;
  if (typeof value !== "string" || value.length > 1000 || storableText(value) !== value) {
    throw bad(what, "description", "expected a string of at most 1000 characters, or null");
  }
  return value;
}

/** The fields of a registration or update, checked (`events` deduplicated, `url` normalised). */
export type CheckedWebhookFields = Omit<WebhookUpdate, "events"> & { events?: WebhookEvent[] };

/** The checked fields given (each present key validated); `required` demands url, events and secret. */
export function webhookFields(input: unknown, what: string, required: boolean): CheckedWebhookFields {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", `${what}: expected { ${KEYS.join(", ")} }`, {
      context: { field: null },
    });
  }
  const unknown = Object.keys(input).find((k) => !(KEYS as readonly string[]).includes(k));
  if (unknown !== undefined) throw bad(what, unknown, `unknown key; known keys are ${KEYS.join(", ")}`);
  const i = input as Record<string, unknown>;
  if (required) {
    for (const key of ["url", "events", "secret"]) {
      if (i[key] === undefined) throw bad(what, key, "is required");
    }
  } else if (Object.values(i).every((v) => v === undefined)) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", `${what}: expected at least one of ${KEYS.join(", ")}`, {
      context: { field: null },
    });
  }
  const out: Record<string, unknown> = {};
  if (i.url !== undefined) out.url = parseWebhookUrl(i.url, `${what}.url`).href;
  if (i.events !== undefined) out.events = events(i.events, what);
  if (i.secret !== undefined) out.secret = secret(i.secret, what);
  if (i.headers !== undefined) out.headers = headers(i.headers, what);
  if (i.description !== undefined) out.description = description(i.description, what);
  if (i.active !== undefined) {
    if (typeof i.active !== "boolean") throw bad(what, "active", "expected a boolean");
    out.active = i.active;
  }
  if (i.maxAttempts !== undefined) out.maxAttempts = int(i.maxAttempts, what, "maxAttempts", 1, 100);
  if (i.timeoutMs !== undefined) out.timeoutMs = int(i.timeoutMs, what, "timeoutMs", 100, 120_000);
  if (i.retry !== undefined) out.retry = retry(i.retry, what);
  return out as CheckedWebhookFields;
}
