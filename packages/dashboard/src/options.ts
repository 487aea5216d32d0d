/** `dashboard()` options: validated once (every problem in one error), defaults filled, frozen. */
import { createHash } from "node:crypto";
import { type Soniq, SoniqError } from "@soniq/core";
import { type HostPolicy, hostList } from "./security/hosts.js";

export type KeyScope = "read" | "write";

export interface DashboardApiKey {
  /** The secret sent as `Authorization: Bearer <key>` or typed into the login form. At least 16 characters. */
  key: string;
  /** Shown in the UI and written to the audit log as `dashboard:<label>`. */
  label: string;
  /** Default "read": a read key can see everything and change nothing. Writes need `scope: "write"`. */
  scope?: KeyScope;
}

export interface DashboardOptions {
  soniq: Soniq;
  /** Without keys the dashboard is read-only and open; with keys every request needs one. */
  apiKeys?: readonly DashboardApiKey[];
  /** Where the handler is mounted, e.g. "/admin/soniq". Default "" (the root). */
  basePath?: string;
  /**
   * A worker whose heartbeat is older than this is shown as stale (passed to `soniq.workers.list()`).
   * Default: core's `DEFAULT_STALE_AFTER_MS` (60000, the workers' default `staleAfterMs`).
   */
  staleAfterMs?: number;
  /** Auto-refresh period of the pages. Default 5000. */
  refreshIntervalMs?: number;
  /** Lifetime of a login session. Default 12 hours. */
  sessionTtlMs?: number;
  /** Called with unexpected errors (the client sees a 500 without details). Default: console.error. */
  onError?: (err: unknown) => void;
  /**
   * Host names (or `host:port`) this dashboard answers besides the loopback names (localhost, 127.0.0.1,
   * ::1). Any other `Host` is refused with 421 (DNS rebinding), and a write's `Origin` must name one of
   * them. Default [].
   */
  allowedHosts?: readonly string[];
  /**
   * Behind a reverse proxy: take the scheme and host from `X-Forwarded-Proto` / `X-Forwarded-Host` (the
   * host must still be allowed), and the login limit's client address from the last `X-Forwarded-For` entry.
   * Only when every request comes through a proxy that sets them. Default false.
   */
  trustProxy?: boolean;
  /**
   * The origin users reach the dashboard at, e.g. "https://ops.example.com": its host is allowed, a write
   * from it passes the origin check, and an https origin makes the session cookie `Secure`. Default none.
   */
  publicOrigin?: string;
  /**
   * Links a job's trace id (`Job.traceId`, stored by `@soniq/opentelemetry`) to your tracing UI, e.g.
   * `(id) => \`https://jaeger.example.com/trace/${id}\``. Must return an http(s) URL; anything else (or a
   * throw) shows the id unlinked. Default: no link.
   */
  traceUrl?: (traceId: string) => string;
}

export interface ResolvedKey {
  readonly digest: Buffer;
  readonly label: string;
  readonly scope: KeyScope;
}

export interface ResolvedDashboardOptions {
  readonly soniq: Soniq;
  readonly keys: readonly ResolvedKey[];
  readonly basePath: string;
  /** null: core's default. */
  readonly staleAfterMs: number | null;
  readonly refreshIntervalMs: number;
  readonly sessionTtlMs: number;
  readonly onError: (err: unknown) => void;
  readonly hosts: HostPolicy;
  /** null: trace ids are shown unlinked. */
  readonly traceUrl: ((traceId: string) => string) | null;
}

export const LABEL_PATTERN = /^[A-Za-z0-9_.@:-]{1,64}$/;
const HOST_PATTERN = /^([a-z0-9_-]+(\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/i;
const BASE_PATH_PATTERN = /^(\/[A-Za-z0-9_.~-]+)*$/;

export function digestKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

function positiveMs(problems: string[], value: unknown, name: string): void {
  if (value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value <= 0)) {
    problems.push(`${name} must be a positive integer (milliseconds)`);
  }
}

function keyProblems(problems: string[], apiKeys: unknown): void {
  if (apiKeys === undefined) return;
  if (!Array.isArray(apiKeys)) {
    problems.push("apiKeys must be an array of { key, label, scope }");
    return;
  }
  const seen = new Set<string>();
  apiKeys.forEach((k: unknown, i) => {
    const entry = (typeof k === "object" && k !== null ? k : {}) as Record<string, unknown>;
    if (typeof entry.key !== "string" || entry.key.length < 16) {
      problems.push(`apiKeys[${i}].key must be a string of at least 16 characters`);
    } else if (seen.has(entry.key)) {
      problems.push(`apiKeys[${i}].key is listed twice`);
    } else seen.add(entry.key);
    if (typeof entry.label !== "string" || !LABEL_PATTERN.test(entry.label)) {
      problems.push(`apiKeys[${i}].label must match ${LABEL_PATTERN} (it is the audit actor)`);
    }
    if (entry.scope !== undefined && entry.scope !== "read" && entry.scope !== "write") {
      problems.push(`apiKeys[${i}].scope must be "read" or "write"`);
    }
  });
}

function publicOriginOf(value: unknown): string | null | undefined {
  if (value === undefined) return null;
  if (typeof value !== "string") return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

function hostProblems(problems: string[], o: DashboardOptions): void {
  const hosts = o.allowedHosts as unknown;
  if (
    hosts !== undefined &&
    (!Array.isArray(hosts) || !hosts.every((h) => typeof h === "string" && HOST_PATTERN.test(h)))
  ) {
    problems.push('allowedHosts must be an array of host names like "ops.example.com" (or "host:port")');
  }
  if (o.trustProxy !== undefined && typeof o.trustProxy !== "boolean")
    problems.push("trustProxy must be a boolean");
  if (publicOriginOf(o.publicOrigin) === undefined) {
    problems.push('publicOrigin must be an http(s) origin like "https://ops.example.com"');
  }
}

export function resolveOptions(options: DashboardOptions): ResolvedDashboardOptions {
  const problems: string[] = [];
  const o = (typeof options === "object" && options !== null ? options : {}) as DashboardOptions;
  // input validation (a user may pass anything at runtime); the dashboard then uses the app API as typed
  const soniq: unknown = o.soniq;
  if (
    typeof soniq !== "object" ||
    soniq === null ||
    !("jobs" in soniq) ||
    typeof (soniq.jobs as { get?: unknown } | null)?.get !== "function"
  ) {
    problems.push("soniq must be a Soniq instance");
  }
  keyProblems(problems, o.apiKeys);
  if (o.basePath !== undefined && (typeof o.basePath !== "string" || !BASE_PATH_PATTERN.test(o.basePath))) {
    problems.push('basePath must be "" or a path like "/admin/soniq" (no trailing slash)');
  }
  positiveMs(problems, o.staleAfterMs, "staleAfterMs");
  positiveMs(problems, o.refreshIntervalMs, "refreshIntervalMs");
  positiveMs(problems, o.sessionTtlMs, "sessionTtlMs");
  if (o.onError !== undefined && typeof o.onError !== "function") problems.push("onError must be a function");
  if (o.traceUrl !== undefined && typeof o.traceUrl !== "function") {
    problems.push("traceUrl must be a function (traceId) => URL");
  }
  hostProblems(problems, o);
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid dashboard options: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return Object.freeze({
    soniq: o.soniq,
    keys: Object.freeze(
      (o.apiKeys ?? []).map((k) =>
        Object.freeze({ digest: digestKey(k.key), label: k.label, scope: k.scope ?? "read" }),
      ),
    ),
    basePath: o.basePath ?? "",
    staleAfterMs: o.staleAfterMs ?? null,
    refreshIntervalMs: o.refreshIntervalMs ?? 5_000,
    sessionTtlMs: o.sessionTtlMs ?? 12 * 60 * 60 * 1000,
    onError: o.onError ?? ((err: unknown) => console.error("[soniq dashboard]", err)),
    traceUrl: o.traceUrl ?? null,
    hosts: Object.freeze({
      allowedHosts: Object.freeze(hostList(o.allowedHosts ?? [], publicOriginOf(o.publicOrigin) ?? null)),
      trustProxy: o.trustProxy === true,
      publicOrigin: publicOriginOf(o.publicOrigin) ?? null,
    }),
  });
}
