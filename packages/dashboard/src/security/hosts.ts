/**
 * Which requests this dashboard answers, and which pages may write to it.
 * - Host: only names it serves: the loopback names (localhost, 127.0.0.1, ::1) by default, plus
 *   `allowedHosts` and the host of `publicOrigin`. A DNS-rebinding page reaches a loopback port under
 *   its own name (`Host: rebind.attacker.example`) and is answered 421 with nothing read.
 * - Origin: a write's `Origin` (or `Referer`) must name an allowed host on the port the request came in
 *   on, or equal `publicOrigin`. It is compared with that list, never with the request's own `Host`
 *   (which a rebinding page chooses), so `Host` and `Origin` both `evil.example` cannot pass.
 * - Behind a TLS proxy: `publicOrigin` says where users reach the dashboard; `trustProxy` takes the
 *   scheme and host from `X-Forwarded-Proto` / `X-Forwarded-Host`. Either makes the cookie `Secure`.
 *   It also takes the client's address (for the login limit) from the last `X-Forwarded-For` entry, the
 *   one the proxy itself appended: what a client writes in front of it is ignored.
 */
import { isIP } from "node:net";
import { DashboardError } from "../errors.js";

export interface HostPolicy {
  /** Lowercase hostnames (IPv6 in brackets) or `host:port` entries. */
  readonly allowedHosts: readonly string[];
  readonly trustProxy: boolean;
  /** e.g. "https://ops.example.com" (an origin: scheme, host, port). */
  readonly publicOrigin: string | null;
}

export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

/** The scheme, host and port this request came to, as the client saw them. */
export interface Where {
  readonly protocol: "http:" | "https:";
  readonly hostname: string;
  readonly port: string;
}

function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

function first(header: string | null): string | null {
  const value = header?.split(",")[0]?.trim();
  return value ? value : null;
}

/** Where the client sent the request: the URL, or the proxy's forwarded headers under `trustProxy`. */
export function whereOf(req: Request, policy: HostPolicy): Where {
  const url = new URL(req.url);
  let protocol = url.protocol === "https:" ? "https:" : "http:";
  let host = url.host;
  if (policy.trustProxy) {
    const proto = first(req.headers.get("x-forwarded-proto"))?.toLowerCase();
    if (proto === "https" || proto === "http") protocol = `${proto}:`;
    host = first(req.headers.get("x-forwarded-host")) ?? host;
  }
  let parsed: URL;
  try {
    parsed = new URL(`${protocol}//${host}`);
  } catch {
    throw new DashboardError("host_not_allowed", "This request names no host this dashboard serves.");
  }
  return {
    protocol: protocol as Where["protocol"],
    hostname: parsed.hostname.toLowerCase(),
    port: portOf(parsed),
  };
}

/** The connection's address from the bindings node:http adapters pass (`{ incoming }`), else null. */
export function socketAddressOf(bindings: unknown): string | null {
  const address = (bindings as { incoming?: { socket?: { remoteAddress?: unknown } } } | undefined)?.incoming
    ?.socket?.remoteAddress;
  return typeof address === "string" && address !== "" ? address : null;
}

/**
 * Who is asking, for the login limit: the proxy's `X-Forwarded-For` entry under `trustProxy`, else the
 * connection's address, else "unknown" (a handler given no bindings counts every client as one).
 */
export function clientOf(req: Request, policy: HostPolicy, socketAddress: string | null): string {
  if (policy.trustProxy) {
    const forwarded = req.headers.get("x-forwarded-for")?.split(",").at(-1)?.trim();
    if (forwarded && isIP(forwarded) !== 0) return forwarded;
  }
  return socketAddress ?? "unknown";
}

function hostAllowed(policy: HostPolicy, hostname: string, port: string): boolean {
  return policy.allowedHosts.some((entry) => entry === hostname || entry === `${hostname}:${port}`);
}

/** Refuses (421) a request whose Host is not one this dashboard serves. */
export function assertAllowedHost(req: Request, policy: HostPolicy): Where {
  const where = whereOf(req, policy);
  if (!hostAllowed(policy, where.hostname, where.port)) {
    throw new DashboardError(
      "host_not_allowed",
      `This dashboard does not serve the host "${where.hostname.slice(0, 100)}". ` +
        "Add it to allowedHosts (soniq dashboard --allowed-host) if it is yours.",
    );
  }
  return where;
}

/** Whether `origin` (an Origin header or a Referer's origin) may write. */
export function originAllowed(origin: string, where: Where, policy: HostPolicy): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  if (policy.publicOrigin !== null && url.origin === policy.publicOrigin) return true;
  const hostname = url.hostname.toLowerCase();
  const port = portOf(url);
  return url.protocol === where.protocol && port === where.port && hostAllowed(policy, hostname, port);
}

/**
 * A write's `Origin` (or `Referer`) must be allowed. Bearer clients (curl, scripts) often send neither,
 * which is allowed; a cookie session must send one, since browsers always do.
 */
export function assertAllowedOrigin(req: Request, policy: HostPolicy, requireOrigin: boolean): void {
  const where = whereOf(req, policy);
  const origin = req.headers.get("origin");
  const referer = req.headers.get("referer");
  const claimed = origin ?? referer;
  if (claimed === null) {
    if (requireOrigin)
      throw new DashboardError("csrf", "A session write must come from the dashboard's own page.");
    return;
  }
  if (!originAllowed(claimed, where, policy)) {
    const shown = claimed.slice(0, 100);
    throw new DashboardError(
      "csrf",
      `Cross-origin write refused (${origin !== null ? "Origin" : "Referer"} ${shown} is not a host this dashboard serves).`,
    );
  }
}

/** Cookies get `Secure` when the client reached the dashboard over TLS. */
export function isSecure(where: Where, policy: HostPolicy): boolean {
  return where.protocol === "https:" || policy.publicOrigin?.startsWith("https:") === true;
}

/** Normalises `allowedHosts` entries and adds the loopback names and publicOrigin's host. */
export function hostList(allowedHosts: readonly string[], publicOrigin: string | null): string[] {
  const out = new Set<string>(LOOPBACK_HOSTS);
  for (const entry of allowedHosts) out.add(entry.toLowerCase());
  if (publicOrigin !== null) {
    const url = new URL(publicOrigin);
    out.add(url.hostname.toLowerCase());
  }
  return [...out];
}
