/**
 * Who is asking, and may they write.
 * - No keys configured: everyone reads, nobody writes (403 `writes_disabled` says how to enable).
 * - Keys configured: every request needs a key, as `Authorization: Bearer <key>` or a session cookie
 *   from the login form. Writes need a "write" key.
 * - CSRF: a bearer request with a foreign `Origin` is refused; a cookie session's write must come from
 *   this origin and carry the session's token (`x-csrf-token` header). The cookie is SameSite=Strict.
 * Keys are compared as SHA-256 digests with `timingSafeEqual`, against every configured key.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { DashboardError } from "./errors.js";
import { digestKey, type KeyScope, type ResolvedDashboardOptions, type ResolvedKey } from "./options.js";

export const SESSION_COOKIE = "soniq_session";
const MAX_SESSIONS = 1000;

export interface Principal {
  readonly label: string | null;
  readonly scope: KeyScope;
  readonly via: "open" | "bearer" | "session";
  readonly csrf: string | null;
}

/** `{ actor }` for core's writes: `dashboard:<key label>` (the audit log's actor). */
export function actorOf(principal: Principal): { actor: string } {
  return { actor: `dashboard:${principal.label ?? "anonymous"}` };
}

const OPEN: Principal = Object.freeze({ label: null, scope: "read", via: "open", csrf: null });

interface Session {
  label: string;
  scope: KeyScope;
  csrf: string;
  expiresAt: number;
}

export function findKey(keys: readonly ResolvedKey[], candidate: string): ResolvedKey | null {
  const digest = digestKey(candidate);
  let found: ResolvedKey | null = null;
  for (const key of keys) {
    if (timingSafeEqual(key.digest, digest) && found === null) found = key;
  }
  return found;
}

function sameText(a: string, b: string): boolean {
  return timingSafeEqual(digestKey(a), digestKey(b));
}

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}

/** Instance-scoped: two dashboards never share sessions. */
export class Auth {
  readonly #sessions = new Map<string, Session>();

  constructor(private readonly options: ResolvedDashboardOptions) {}

  get enabled(): boolean {
    return this.options.keys.length > 0;
  }

  login(candidate: string): { id: string; session: Session } | null {
    const key = findKey(this.options.keys, candidate);
    if (!key) return null;
    this.#prune();
    const id = randomBytes(32).toString("base64url");
    const session: Session = {
      label: key.label,
      scope: key.scope,
      csrf: randomBytes(24).toString("base64url"),
      expiresAt: Date.now() + this.options.sessionTtlMs,
    };
    this.#sessions.set(id, session);
    return { id, session };
  }

  logout(req: Request): void {
    const id = cookieValue(req.headers.get("cookie"), SESSION_COOKIE);
    if (id) this.#sessions.delete(id);
  }

  /** The caller, or null when keys are configured and none was presented (or it was wrong). */
  identify(req: Request): Principal | null {
    if (!this.enabled) return OPEN;
    const header = req.headers.get("authorization");
    if (header !== null) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const key = match?.[1] ? findKey(this.options.keys, match[1]) : null;
      return key ? { label: key.label, scope: key.scope, via: "bearer", csrf: null } : null;
    }
    const id = cookieValue(req.headers.get("cookie"), SESSION_COOKIE);
    const session = id ? this.#sessions.get(id) : undefined;
    if (!id || !session) return null;
    if (session.expiresAt <= Date.now()) {
      this.#sessions.delete(id);
      return null;
    }
    return { label: session.label, scope: session.scope, via: "session", csrf: session.csrf };
  }

  /** Throws the refusal for a read by `principal` (null = none presented). */
  assertRead(principal: Principal | null): asserts principal is Principal {
    if (principal === null) {
      throw new DashboardError(
        "unauthorized",
        "This dashboard needs an API key: send `Authorization: Bearer <key>` or log in at /login.",
      );
    }
  }

  /** Throws the refusal for a write: no key, read-only key, or a cross-site request. */
  assertWrite(principal: Principal | null, req: Request): asserts principal is Principal {
    assertSameOrigin(req, principal?.via === "session");
    if (!this.enabled) {
      throw new DashboardError(
        "writes_disabled",
        "The dashboard is read-only: writes are enabled by configuring apiKeys, e.g. " +
          'dashboard({ soniq, apiKeys: [{ key: process.env.SONIQ_DASHBOARD_KEY, label: "ops", scope: "write" }] }).',
      );
    }
    this.assertRead(principal);
    if (principal.scope !== "write") {
      throw new DashboardError(
        "forbidden",
        `The key "${principal.label}" is read-only; writes need a write key.`,
      );
    }
    if (principal.via === "session") {
      const token = req.headers.get("x-csrf-token");
      if (!token || !principal.csrf || !sameText(token, principal.csrf)) {
        throw new DashboardError("csrf", "Missing or wrong CSRF token (x-csrf-token); reload the page.");
      }
    }
  }

  #prune(): void {
    const now = Date.now();
    for (const [id, s] of this.#sessions) if (s.expiresAt <= now) this.#sessions.delete(id);
    while (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
  }
}

/**
 * A write's `Origin` (or `Referer`) must be this server's origin. Bearer clients (curl, scripts) often
 * send neither, which is allowed; a cookie session must send one, since browsers always do.
 */
export function assertSameOrigin(req: Request, requireOrigin: boolean): void {
  const own = new URL(req.url).origin;
  const origin = req.headers.get("origin");
  const referer = req.headers.get("referer");
  let claimed: string | null = origin;
  if (claimed === null && referer !== null) {
    try {
      claimed = new URL(referer).origin;
    } catch {
      claimed = "invalid";
    }
  }
  if (claimed === null) {
    if (requireOrigin)
      throw new DashboardError("csrf", "A session write must come from the dashboard's own page.");
    return;
  }
  if (claimed !== own) {
    throw new DashboardError("csrf", `Cross-origin write refused (Origin ${claimed} is not ${own}).`);
  }
}
