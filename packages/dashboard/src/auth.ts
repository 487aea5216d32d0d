/**
 * Who is asking, and may they write.
 * - No keys configured: everyone reads, nobody writes (403 `writes_disabled` says how to enable).
 * - Keys configured: every request needs a key, as `Authorization: Bearer <key>` or a session cookie
 *   from the login form. Writes need a "write" key.
 * - CSRF: a bearer request with a foreign `Origin` is refused; a cookie session's write must come from
 *   an allowed origin (security/hosts.ts) and carry the session's token (`x-csrf-token` header). The
 *   cookie is SameSite=Strict.
 * - Sessions: at most MAX_SESSIONS_PER_KEY per key (a key's oldest session ends first), so logging in
 *   again and again with one key never ends another key's sessions.
 * Keys are compared as SHA-256 digests with `timingSafeEqual`, against every configured key.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { DashboardError } from "./errors.js";
import { digestKey, type KeyScope, type ResolvedDashboardOptions, type ResolvedKey } from "./options.js";
import { assertAllowedOrigin } from "./security/hosts.js";
import { LoginLimit } from "./security/login-limit.js";

export const SESSION_COOKIE = "soniq_session";
export const MAX_SESSIONS_PER_KEY = 20;

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
  key: ResolvedKey;
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
  readonly #limit = new LoginLimit();

  constructor(private readonly options: ResolvedDashboardOptions) {}

  get enabled(): boolean {
    return this.options.keys.length > 0;
  }

  /**
   * A new session for the key, or null for a wrong key; 429 while failed logins from `client` (its
   * address, security/hosts.ts `clientOf`), or from all clients, are over the limit.
   */
  login(candidate: string, client: string): { id: string; session: Session } | null {
    this.#limit.check(client);
    const key = findKey(this.options.keys, candidate);
    if (!key) {
      this.#limit.failed(client);
      return null;
    }
    this.#prune(key);
    const id = randomBytes(32).toString("base64url");
    const session: Session = {
      key,
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
    this.assertOrigin(req, principal?.via === "session");
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

  /** Refuses a write (or a login form) from an origin this dashboard does not serve. */
  assertOrigin(req: Request, requireOrigin: boolean): void {
    assertAllowedOrigin(req, this.options.hosts, requireOrigin);
  }

  /** Drops expired sessions, and the key's oldest ones until it has room for one more. */
  #prune(key: ResolvedKey): void {
    const now = Date.now();
    const mine: string[] = [];
    for (const [id, s] of this.#sessions) {
      if (s.expiresAt <= now) this.#sessions.delete(id);
      else if (s.key === key) mine.push(id);
    }
    // Map order is insertion order: the first ids are the oldest.
    for (let i = 0; i <= mine.length - MAX_SESSIONS_PER_KEY; i++) this.#sessions.delete(mine[i] as string);
  }
}
