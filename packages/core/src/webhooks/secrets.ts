/**
 * Endpoint secrets at rest: AES-256-GCM (authenticated) under a key derived (scrypt) from one of the app's keys,
 * `webhooks.secretKey`: one key, or a keyring `{ current, keys }` to rotate it (the CLI and the example read them
 * from the environment; the library reads none). The endpoint's id is the associated data, so a ciphertext copied
 * onto another row does not decrypt. Two formats, parts in base64url:
 * - `v1.<iv>.<tag>.<ciphertext>`: sealed under a single `secretKey`, with no key id. A single key opens it; a
 *   keyring tries each of its keys, current first (the GCM tag tells the right one).
 * - `v2.<keyId>.<iv>.<tag>.<ciphertext>`: sealed under the keyring's key `keyId`, and opened by that key only.
 * A single key seals `v1` (as it always did, so processes of an older version still read it); a keyring seals
 * `v2` under its `current` key. `webhooks.reseal()` rewrites every stored secret not sealed that way
 * (`isCurrent`). A plain secret is never stored, returned or logged.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";
import { SoniqError } from "../common/errors.js";
import type { WebhookKeyring } from "./options.js";

const SALT = "soniq.webhooks.secret.v1";

/** Turns secrets into ciphertext and back with the app's key (or keyring). */
export interface SecretBox {
  seal(secret: string, endpointId: string): string;
  open(cipher: string, endpointId: string): string;
  /** The key id `seal` records: the keyring's `current`; null for a single key (format `v1`) or none. */
  readonly currentKeyId: string | null;
  /** The key id a stored value names (`v2`); null for a `v1` value or one in no known format. */
  keyIdOf(cipher: string): string | null;
  /** Whether `cipher` is sealed as `seal` seals now (same format, same key): nothing for a re-seal to do. */
  isCurrent(cipher: string): boolean;
}

/** A stored value taken apart; null when it is in no known format. */
interface Sealed {
  version: "v1" | "v2";
  keyId: string | null;
  iv: string;
  tag: string;
  body: string;
}

function parse(stored: string): Sealed | null {
  const parts = stored.split(".");
  if (parts[0] === "v1" && parts.length === 4) {
    const [, iv = "", tag = "", body = ""] = parts;
    return { version: "v1", keyId: null, iv, tag, body };
  }
  if (parts[0] === "v2" && parts.length === 5 && parts[1] !== "") {
    const [, keyId = "", iv = "", tag = "", body = ""] = parts;
    return { version: "v2", keyId, iv, tag, body };
  }
  return null;
}

/** `SONIQ_INVALID_OPTIONS`: the instance has no `webhooks.secretKey`, and how to give it one. */
export function missingSecretKey(): SoniqError {
  return new SoniqError(
    "SONIQ_INVALID_OPTIONS",
    "Webhook secrets are encrypted at rest: pass new Soniq({ webhooks: { secretKey } }) (a key of at least 16 characters, or a keyring { current, keys }; the CLI reads SONIQ_SECRET_KEY, or SONIQ_SECRET_KEYS and SONIQ_SECRET_KEY_ID).",
    { context: { field: "webhooks.secretKey" } },
  );
}

function undecryptable(endpointId: string, keyId: string | null, unknownKey: boolean): SoniqError {
  const why = unknownKey
    ? `it is sealed under key "${keyId}", which webhooks.secretKey does not hold: add that key to the keyring's keys`
    : "was it stored under another secretKey?";
  return new SoniqError(
    "SONIQ_INVALID_STATE",
    `The secret of webhook endpoint ${endpointId} cannot be decrypted: ${why}`,
    { context: { endpointId, keyId } },
  );
}

function encrypt(key: Buffer, secret: string, endpointId: string): string[] {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(endpointId));
  const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
}

/** The plain secret, or null when `key` does not open it (the GCM tag does not verify). */
function decrypt(key: Buffer, sealed: Sealed, endpointId: string): string | null {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64url"));
    decipher.setAAD(Buffer.from(endpointId));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(sealed.body, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  } catch {
    return null;
  }
}

/**
 * A box for `secretKey` (a key, a keyring, or null); without one every `seal` and `open` throws
 * `SONIQ_INVALID_OPTIONS` saying how to set one. Keys are derived when first used, each once.
 */
export function secretBox(secretKey: string | WebhookKeyring | null): SecretBox {
  const ring: WebhookKeyring | null = secretKey === null || typeof secretKey === "object" ? secretKey : null;
  const derived = new Map<string, Buffer>();
  /** The key `id` names (null: the single key), derived once; null when there is no such key. */
  const keyOf = (id: string | null): Buffer | null => {
    let text: string | undefined;
    if (id === null) text = typeof secretKey === "string" ? secretKey : undefined;
    else if (ring !== null && Object.hasOwn(ring.keys, id)) text = ring.keys[id];
    if (text === undefined) return null;
    const slot = id ?? "";
    let key = derived.get(slot);
    if (key === undefined) {
      key = scryptSync(text, SALT, 32);
      derived.set(slot, key);
    }
    return key;
  };
  const currentKeyId = ring === null ? null : ring.current;
  /** The keys that may have sealed `sealed`: its own for v2; for v1 the single key, or every key of the ring. */
  const candidates = (sealed: Sealed): (string | null)[] => {
    if (sealed.version === "v2") return keyOf(sealed.keyId) === null ? [] : [sealed.keyId];
    if (ring === null) return [null];
    return [ring.current, ...Object.keys(ring.keys).filter((id) => id !== ring.current)];
  };
  return {
    currentKeyId,
    seal(secret, endpointId) {
      if (secretKey === null) throw missingSecretKey();
      const key = keyOf(currentKeyId) as Buffer;
      const parts = encrypt(key, secret, endpointId);
      return currentKeyId === null ? `v1.${parts.join(".")}` : `v2.${currentKeyId}.${parts.join(".")}`;
    },
    open(stored, endpointId) {
      if (secretKey === null) throw missingSecretKey();
      const sealed = parse(stored);
      if (sealed === null) throw undecryptable(endpointId, null, false);
      const ids = candidates(sealed);
      if (ids.length === 0) throw undecryptable(endpointId, sealed.keyId, true);
      for (const id of ids) {
        const key = keyOf(id);
        const plain = key === null ? null : decrypt(key, sealed, endpointId);
        if (plain !== null) return plain;
      }
      throw undecryptable(endpointId, sealed.keyId, false);
    },
    keyIdOf(stored) {
      return parse(stored)?.keyId ?? null;
    },
    isCurrent(stored) {
      const sealed = parse(stored);
      if (sealed === null) return false;
      return currentKeyId === null ? sealed.version === "v1" : sealed.keyId === currentKeyId;
    },
  };
}
