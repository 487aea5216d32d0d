/** `new Soniq({ webhooks })`: the encryption key for endpoint secrets and where webhooks may go. */

/**
 * Several keys for endpoint secrets, to rotate them: new secrets are sealed under `current`, and a stored secret
 * is opened with the key whose id it records (one sealed under a single `secretKey` before, with each key in
 * turn). `soniq.webhooks.reseal()` re-seals every stored secret under `current`; after it, an old key can go.
 */
export interface WebhookKeyring {
  /** The id of the key new secrets are sealed under: one of `keys`. */
  current: string;
  /**
   * Every key a stored secret may be sealed under, by id: ids of 1 to 64 letters, digits, `_` or `-` (an id is
   * stored with each secret: never reuse one for another key), keys of at least 16 characters.
   */
  keys: Readonly<Record<string, string>>;
}

export interface WebhookOptions {
  /**
   * The key endpoint secrets are encrypted with (AES-256-GCM; at least 16 characters), or a keyring
   * `{ current, keys }` to rotate it. Required to register an endpoint and to deliver; the CLI reads it from
   * `SONIQ_SECRET_KEY` (a keyring from `SONIQ_SECRET_KEYS` and `SONIQ_SECRET_KEY_ID`). A worker without it (or
   * without the key a secret was sealed under) logs an error once per endpoint and leaves that endpoint's
   * deliveries pending, no attempt spent, for a worker that has it.
   */
  secretKey?: string | WebhookKeyring;
  /** Allow targets on loopback, private and link-local addresses (tests, a private network). Default false. */
  allowPrivateNetworks?: boolean;
  /**
   * The ports an endpoint URL may name (its scheme's default when it names none: 443 for https, 80 for http),
   * e.g. `[443, 8443]`: another port is refused at `register` and `update`, and an attempt to an endpoint stored
   * on one sends nothing and fails, with `SONIQ_WEBHOOK_TARGET_REFUSED`. Integers from 1 to 65535, at least one.
   * Default: any port.
   */
  allowedPorts?: readonly number[];
  /** How often a process re-reads the endpoint list to see other processes' changes (ms). Default 5000. */
  refreshMs?: number;
  /**
   * How long a finished delivery (delivered, or failed with no attempts left) is kept after its last attempt
   * (ms), for `listDeliveries`, the dashboard and `redeliver`; the maintenance pass deletes older ones. Pending
   * deliveries are not deleted: they are ended at `pendingMaxAgeMs`, then kept this long. Default 604800000
   * (7 days); 0 deletes them at the next pass.
   */
  retentionMs?: number;
  /**
   * How long a delivery may stay pending, from when it was written (ms): the maintenance pass ends an older one
   * as failed, whatever attempts it has left (its last error says why), so an outbox whose receiver never
   * answers, or whose endpoint stays inactive, stops growing; `redeliver` sends it again. An integer of at
   * least 60000. Default 604800000 (7 days).
   */
  pendingMaxAgeMs?: number;
}

export interface ResolvedWebhookOptions {
  /** A key, a keyring (frozen copy), or null. */
  readonly secretKey: string | Readonly<WebhookKeyring> | null;
  readonly allowPrivateNetworks: boolean;
  /** Null: any port. */
  readonly allowedPorts: readonly number[] | null;
  readonly refreshMs: number;
  readonly retentionMs: number;
  readonly pendingMaxAgeMs: number;
}

export const DEFAULT_WEBHOOK_OPTIONS: ResolvedWebhookOptions = Object.freeze({
  secretKey: null,
  allowPrivateNetworks: false,
  allowedPorts: null,
  refreshMs: 5000,
  retentionMs: 7 * 24 * 3_600_000,
  pendingMaxAgeMs: 7 * 24 * 3_600_000,
});

const KEYS = [
  "secretKey",
  "allowPrivateNetworks",
  "allowedPorts",
  "refreshMs",
  "retentionMs",
  "pendingMaxAgeMs",
];

/** A keyring's key id: stored in each secret it seals (`v2.<keyId>....`), so no dot. */
const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What is wrong with `secretKey`: a key of at least 16 characters, or a keyring `{ current, keys }`. */
function secretKeyProblems(key: unknown): string[] {
  if (key === undefined || (typeof key === "string" && key.length >= 16)) return [];
  if (typeof key !== "object" || key === null || Array.isArray(key)) {
    return [
      "webhooks.secretKey must be a string of at least 16 characters, or a keyring { current, keys } (see WebhookKeyring)",
    ];
  }
  const extra = Object.keys(key).filter((k) => k !== "current" && k !== "keys");
  if (extra.length > 0) {
    return [`webhooks.secretKey has no key "${extra[0]}": a keyring is { current, keys }`];
  }
  const { current, keys } = key as { current?: unknown; keys?: unknown };
  if (typeof keys !== "object" || keys === null || Array.isArray(keys) || Object.keys(keys).length === 0) {
    return [
      "webhooks.secretKey.keys must be an object of at least one key by id, e.g. { k1: process.env.KEY }",
    ];
  }
  const problems: string[] = [];
  const ids = Object.keys(keys);
  const badId = ids.find((id) => !KEY_ID.test(id));
  if (badId !== undefined) {
    problems.push(
      `webhooks.secretKey.keys must have ids of 1 to 64 letters, digits, _ or - (${JSON.stringify(badId.slice(0, 80))} is not one)`,
    );
  }
  const weak = ids.find((id) => {
    const value = (keys as Record<string, unknown>)[id];
    return typeof value !== "string" || value.length < 16;
  });
  if (weak !== undefined) {
    problems.push(
      `webhooks.secretKey.keys must map each id to a string of at least 16 characters (the key of ${JSON.stringify(weak.slice(0, 80))} is not one)`,
    );
  }
  if (typeof current !== "string" || !Object.hasOwn(keys, current)) {
    problems.push(
      `webhooks.secretKey.current must be the id of one of webhooks.secretKey.keys (${ids.map((id) => JSON.stringify(id.slice(0, 80))).join(", ")})`,
    );
  }
  return problems;
}

export function webhookOptionProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [`webhooks must be { ${KEYS.join(", ")} }`];
  }
  const problems = Object.keys(value)
    .filter((k) => !KEYS.includes(k))
    .map((k) => `webhooks has no option "${k}" (it takes ${KEYS.join(", ")})`);
  const v = value as Record<string, unknown>;
  problems.push(...secretKeyProblems(v.secretKey));
  if (v.allowPrivateNetworks !== undefined && typeof v.allowPrivateNetworks !== "boolean") {
    problems.push("webhooks.allowPrivateNetworks must be a boolean");
  }
  const ports = v.allowedPorts;
  if (
    ports !== undefined &&
    (!Array.isArray(ports) ||
      ports.length === 0 ||
      !ports.every((p) => typeof p === "number" && Number.isInteger(p) && p >= 1 && p <= 65535))
  ) {
    problems.push("webhooks.allowedPorts must be a non-empty array of ports (integers from 1 to 65535)");
  }
  const refresh = v.refreshMs;
  if (
    refresh !== undefined &&
    (typeof refresh !== "number" || !Number.isSafeInteger(refresh) || refresh < 10 || refresh > 3_600_000)
  ) {
    problems.push("webhooks.refreshMs must be an integer from 10 to 3600000");
  }
  const retention = v.retentionMs;
  if (
    retention !== undefined &&
    (typeof retention !== "number" || !Number.isSafeInteger(retention) || retention < 0)
  ) {
    problems.push("webhooks.retentionMs must be an integer of at least 0");
  }
  const pendingMax = v.pendingMaxAgeMs;
  if (
    pendingMax !== undefined &&
    (typeof pendingMax !== "number" || !Number.isSafeInteger(pendingMax) || pendingMax < 60_000)
  ) {
    problems.push("webhooks.pendingMaxAgeMs must be an integer of at least 60000 (1 minute)");
  }
  return problems;
}

/** A frozen copy of a keyring (the caller's object may change later); a key as it is. */
function resolvedSecretKey(key: WebhookOptions["secretKey"]): ResolvedWebhookOptions["secretKey"] {
  if (key === undefined) return null;
  if (typeof key === "string") return key;
  return Object.freeze({ current: key.current, keys: Object.freeze({ ...key.keys }) });
}

export function resolveWebhookOptions(value: WebhookOptions): ResolvedWebhookOptions {
  return Object.freeze({
    secretKey: resolvedSecretKey(value.secretKey),
    allowPrivateNetworks: value.allowPrivateNetworks ?? false,
    allowedPorts: value.allowedPorts === undefined ? null : Object.freeze([...new Set(value.allowedPorts)]),
    refreshMs: value.refreshMs ?? DEFAULT_WEBHOOK_OPTIONS.refreshMs,
    retentionMs: value.retentionMs ?? DEFAULT_WEBHOOK_OPTIONS.retentionMs,
    pendingMaxAgeMs: value.pendingMaxAgeMs ?? DEFAULT_WEBHOOK_OPTIONS.pendingMaxAgeMs,
  });
}
