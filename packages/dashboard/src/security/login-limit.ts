/**
 * The login form's rate limit: failed logins are counted in a sliding minute, per client address and
 * over all clients. Past a client's limit every login from that address (right key or not) answers 429
 * with `Retry-After` until its oldest failure leaves the window; past the ceiling over all clients
 * (several times higher) every login does, so guessing from many addresses is bounded too. The client is
 * the connection's address, or under `trustProxy` the proxy's `X-Forwarded-For` entry (security/hosts.ts);
 * a handler given no address counts every client as one. At most `clients` addresses are remembered; the
 * one whose last failure is oldest is forgotten first. Keys are at least 16 characters, so this bounds the
 * work and the log noise of a guessing client rather than the odds of a guess. Bearer requests are not
 * affected. Instance-scoped.
 */
import { DashboardError } from "../errors.js";

/** Failed logins one client address may make in a minute. */
export const LOGIN_FAILURES_PER_MINUTE = 10;
/** Failed logins all clients together may make in a minute. */
export const LOGIN_FAILURES_PER_MINUTE_ALL_CLIENTS = 50;
/** Client addresses remembered at once. */
export const LOGIN_CLIENTS_TRACKED = 10_000;
const WINDOW_MS = 60_000;

export interface LoginLimitOptions {
  readonly perClient?: number;
  readonly allClients?: number;
  readonly clients?: number;
  readonly now?: () => number;
}

/** Failure times within the window, oldest first; at most `max` are kept (more would not change a check). */
class FailureWindow {
  readonly #times: number[] = [];

  constructor(private readonly max: number) {}

  /** Seconds until a login is allowed again, or 0 when it is allowed now. */
  waitS(now: number): number {
    while (this.#times.length > 0 && (this.#times[0] as number) <= now - WINDOW_MS) this.#times.shift();
    if (this.#times.length < this.max) return 0;
    return Math.max(1, Math.ceil(((this.#times[0] as number) + WINDOW_MS - now) / 1000));
  }

  get empty(): boolean {
    return this.#times.length === 0;
  }

  add(now: number): void {
    this.#times.push(now);
    if (this.#times.length > this.max) this.#times.shift();
  }
}

export class LoginLimit {
  readonly #perClient: number;
  readonly #maxClients: number;
  readonly #now: () => number;
  readonly #all: FailureWindow;
  /** Map order is the order of last failure: the first entry is forgotten first. */
  readonly #clients = new Map<string, FailureWindow>();

  constructor(options: LoginLimitOptions = {}) {
    this.#perClient = options.perClient ?? LOGIN_FAILURES_PER_MINUTE;
    this.#maxClients = options.clients ?? LOGIN_CLIENTS_TRACKED;
    this.#now = options.now ?? Date.now;
    this.#all = new FailureWindow(options.allClients ?? LOGIN_FAILURES_PER_MINUTE_ALL_CLIENTS);
  }

  /** How many client addresses are remembered now. */
  get clientsTracked(): number {
    return this.#clients.size;
  }

  /** Throws 429 while the client's window, or the window over all clients, is full. */
  check(client: string): void {
    const now = this.#now();
    const mine = this.#clients.get(client);
    const mineWaitS = mine?.waitS(now) ?? 0;
    if (mine?.empty) this.#clients.delete(client);
    if (mineWaitS > 0) throw limited(mineWaitS, "from this address");
    const allWaitS = this.#all.waitS(now);
    if (allWaitS > 0) throw limited(allWaitS, "on this dashboard");
  }

  failed(client: string): void {
    const now = this.#now();
    this.#all.add(now);
    const mine = this.#clients.get(client) ?? new FailureWindow(this.#perClient);
    this.#clients.delete(client);
    mine.add(now);
    this.#clients.set(client, mine);
    for (const oldest of this.#clients.keys()) {
      if (this.#clients.size <= this.#maxClients) break;
      this.#clients.delete(oldest);
    }
  }
}

function limited(retryAfterS: number, where: string): DashboardError {
  return new DashboardError(
    "rate_limited",
    `Too many failed logins ${where}; try again in ${retryAfterS} s (API clients can send the key as a Bearer header).`,
    { retryAfterS },
  );
}
