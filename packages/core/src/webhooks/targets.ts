/**
 * Where a webhook may be sent. A URL must be http(s) without credentials; unless `allowPrivateNetworks`,
 * every address its host resolves to must be public: loopback, private (RFC 1918, unique-local), link-local
 * (cloud metadata lives there), site-local, carrier-grade NAT, multicast, unspecified and reserved ranges are
 * refused. An IPv6 address that carries an IPv4 one is judged by that IPv4 address: IPv4-mapped
 * (`::ffff:0:0/96`), NAT64 (`64:ff9b::/96`, the last 32 bits) and 6to4 (`2002::/16`, bits 16-48); the
 * deprecated IPv4-compatible block `::/96` and the local-use NAT64 prefix `64:ff9b:1::/48` are refused whole.
 * Checked at registration, again before every attempt (a name may resolve elsewhere later), and once more by
 * the attempt's own connection (`publicOnlyLookup`): the addresses it connects to are the ones it vetted, so a
 * name that answers a public address to the check and a private one to the connection (DNS rebinding) is
 * refused too. With `allowedPorts`, the URL's port (its scheme's default when it names none) must be one of them,
 * checked at registration and before every attempt, before any look-up.
 */
import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { SoniqError } from "../common/errors.js";

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  BLOCKED.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 96],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["64:ff9b:1::", 48],
  ["2001:db8::", 32],
] as const) {
  BLOCKED.addSubnet(net, prefix, "ipv6");
}

/** The eight 16-bit groups of a valid IPv6 literal (a trailing dotted IPv4 part and a zone id allowed). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, "");
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

function ipv4Of(high: number, low: number): string {
  return `${high >>> 8}.${high & 0xff}.${low >>> 8}.${low & 0xff}`;
}

/** The IPv4 address an IPv6 one carries (IPv4-mapped, NAT64 well-known prefix, 6to4), else null. */
function embeddedIpv4(g: number[]): string | null {
  const low = ipv4Of(g[6] as number, g[7] as number);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return low; // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return low; // 64:ff9b::a.b.c.d
  if (g[0] === 0x2002) return ipv4Of(g[1] as number, g[2] as number); // 2002:AABB:CCDD::/48
  return null;
}

/** True when `address` (an IP literal) is loopback, private, link-local or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, "ipv4");
  if (family !== 6) return true;
  const bare = address.replace(/%.*$/, "");
  if (BLOCKED.check(bare, "ipv6")) return true;
  const embedded = embeddedIpv4(ipv6Groups(bare));
  return embedded !== null && BLOCKED.check(embedded, "ipv4");
}

function malformed(message: string, url: string): SoniqError {
  return new SoniqError("SONIQ_INVALID_ARGUMENT", message, { context: { field: "url", url } });
}

/** The URL parsed and checked for shape (http or https, a host, no user:password). */
export function parseWebhookUrl(value: unknown, what: string): URL {
  if (typeof value !== "string" || value.length === 0 || value.length > 2048) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `${what}: expected an http(s) URL of at most 2048 characters.`,
      {
        context: { field: "url" },
      },
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw malformed(`${what}: "${value}" is not a valid URL.`, value);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw malformed(`${what}: only http and https URLs are accepted (got ${url.protocol}).`, value);
  }
  if (url.username !== "" || url.password !== "") {
    throw malformed(`${what}: a URL must not carry credentials; use headers for authentication.`, url.origin);
  }
  return url;
}

/** Every address a host name resolves to (the system resolver; tests pass their own). */
export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

function refused(what: string, host: string, bad: string | undefined): SoniqError {
  return new SoniqError(
    "SONIQ_WEBHOOK_TARGET_REFUSED",
    `${what}: "${host}" resolves to ${bad ?? "nothing"}, a private, loopback or reserved address; webhooks go to public addresses unless new Soniq({ webhooks: { allowPrivateNetworks: true } }).`,
    { context: { field: "url", host, address: bad ?? null } },
  );
}

/**
 * The lookup a delivery's connection uses (Node calls it for a host name, not for an IP literal): it resolves
 * the name once and hands the connection only addresses that are all public, else fails the connection with
 * `SONIQ_WEBHOOK_TARGET_REFUSED`.
 */
export function publicOnlyLookup(resolve: Resolver, what: string): LookupFunction {
  return (hostname, options, callback) => {
    const answer = callback as (
      err: Error | null,
      address?: string | LookupAddress[],
      family?: number,
    ) => void;
    resolve(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = wanted === 0 ? all : all.filter((a) => a.family === wanted);
        const first = addresses[0];
        const bad = addresses.find((a) => isPrivateAddress(a.address))?.address;
        if (bad !== undefined || first === undefined) answer(refused(what, hostname, bad));
        else if (options.all) answer(null, addresses);
        else answer(null, first.address, first.family);
      },
      (err: Error) => answer(err),
    );
  };
}

/** The port a URL connects to: the one it names, else its scheme's default (443 for https, 80 for http). */
function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** The URL's port must be one of `allowedPorts` (null: any port). */
export function assertAllowedPort(url: URL, allowedPorts: readonly number[] | null, what: string): void {
  if (allowedPorts === null) return;
  const port = portOf(url);
  if (allowedPorts.includes(port)) return;
  throw new SoniqError(
    "SONIQ_WEBHOOK_TARGET_REFUSED",
    `${what}: port ${port} of "${url.hostname}" is not one of webhooks.allowedPorts (${allowedPorts.join(", ")}); use an endpoint on an allowed port, or add it with new Soniq({ webhooks: { allowedPorts: [...] } }).`,
    { context: { field: "url", host: url.hostname, port, allowedPorts: [...allowedPorts] } },
  );
}

/** Every address the URL's host resolves to must be public, unless `allowPrivateNetworks`. */
export async function assertPublicTarget(
  url: URL,
  allowPrivateNetworks: boolean,
  what: string,
  resolve: Resolver = systemResolver,
): Promise<void> {
  if (allowPrivateNetworks) return;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await resolve(host)).map((a) => a.address);
    } catch (err) {
      throw new SoniqError("SONIQ_INVALID_ARGUMENT", `${what}: the host "${host}" does not resolve.`, {
        context: { field: "url", host },
        cause: err,
      });
    }
  }
  const bad = addresses.find(isPrivateAddress);
  if (bad !== undefined || addresses.length === 0) throw refused(what, host, bad);
}
