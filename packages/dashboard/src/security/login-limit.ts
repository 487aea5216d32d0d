/**
 * The login form's rate limit: failed logins are counted in a sliding minute, per client address and
 * over all clients. Past a client's limit every login from that address (right key or not) answers 429
 * with `Retry-After` until its oldest failure leaves the window; past the ceiling over all clients
 * (several times higher) every login does, so guessing from many addresses is bounded too. The client is
 * the connection's address, or under `trustProxy` the proxy's `X-Forwarded-For` entry (security/hosts.ts);
 * a handler given no address counts every client as one. A client's bucket is its address for IPv4, its /64
 * prefix for IPv6 (one subscriber or host usually holds a whole /64, so rotating addresses inside it buys no
 * more guesses), and the IPv4 address of an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`, how a dual-stack socket
 * sees an IPv4 client). At most `clients` buckets are remembered; the one whose last failure is oldest is
 * forgotten first. Keys are at least 16 characters, so this bounds the work and the log noise of a guessing
 * client rather than the odds of a guess. Bearer requests are not affected. Instance-scoped.
 */
import { isIP } from "node:net";
import { DashboardError } from "../errors.js";

/** Failed logins one client (an IPv4 address, an IPv6 /64) may make in a minute. */
export const LOGIN_FAILURES_PER_MINUTE = 10;
/** Failed logins all clients together may make in a minute. */
export const LOGIN_FAILURES_PER_MINUTE_ALL_CLIENTS = 50;
/** Client buckets remembered at once. */
export const LOGIN_CLIENTS_TRACKED = 10_000;
const WINDOW_MS = 60_000;

export interface LoginLimitOptions {
  readonly perClient?: number;
  readonly allClients?: number;
  readonly clients?: number;
  readonly now?: () => number;
}

/** The eight 16-bit groups of a valid IPv6 literal without a zone id (a trailing dotted IPv4 part allowed). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The bucket a client's failed logins count in: an IPv4 address itself, an IPv6 address's /64 prefix
 * (`2001:db8:1:2::/64`), the IPv4 address an IPv4-mapped IPv6 one carries; anything else (no address known:
 * "unknown") as given.
 */
export function loginBucketOf(client: string): string {
  if (isIP(client) === 4) return client;
  const bare = client.replace(/%.*$/, "");
  if (isIP(bare) !== 6) return client;
  const g = ipv6Groups(bare.toLowerCase());
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    const [high, low] = [g[6] as number, g[7] as number];
    return `${high >>> 8}.${high & 0xff}.${low >>> 8}.${low & 0xff}`;
  }
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(":")}::/64`;
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

  /** How many client buckets are remembered now. */
  get clientsTracked(): number {
    return this.#clients.size;
  }

  /** Throws 429 while the client's window (its bucket's, `loginBucketOf`), or the window over all clients, is full. */
  check(address: string): void {
    const client = loginBucketOf(address);
    const now = this.#now();
    const mine = this.#clients.get(client);
    const mineWaitS = mine?.waitS(now) ?? 0;
    if (mine?.empty) this.#clients.delete(client);
    if (mineWaitS > 0) throw limited(mineWaitS, "from this address");
    const allWaitS = this.#all.waitS(now);
    if (allWaitS > 0) throw limited(allWaitS, "on this dashboard");
  }

  failed(address: string): void {
    const client = loginBucketOf(address);
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
