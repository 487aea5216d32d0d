/**
 * Endpoint secrets at rest: AES-256-GCM (authenticated) under a key derived from the app's `secretKey`
 * (the CLI and the example read it from `SONIQ_SECRET_KEY`; the library reads no environment). The
 * endpoint's id is the associated data, so a ciphertext copied onto another row does not decrypt. Stored as
 * `v1.<iv>.<tag>.<ciphertext>` (base64url). A plain secret is never stored, returned or logged.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";
import { SoniqError } from "../common/errors.js";

const SALT = "soniq.webhooks.secret.v1";

/** Turns secrets into ciphertext and back with one app key. */
export interface SecretBox {
  seal(secret: string, endpointId: string): string;
  open(cipher: string, endpointId: string): string;
}

function missingKey(): SoniqError {
  return new SoniqError(
    "SONIQ_INVALID_OPTIONS",
    "Webhook secrets are encrypted at rest: pass new Soniq({ webhooks: { secretKey } }) (at least 16 characters; the CLI reads SONIQ_SECRET_KEY).",
    { context: { field: "webhooks.secretKey" } },
  );
}

/** A box for `secretKey`; without a key every call throws `SONIQ_INVALID_OPTIONS` saying how to set one. */
export function secretBox(secretKey: string | null): SecretBox {
  let key: Buffer | null = null;
  const derived = (): Buffer => {
    if (secretKey === null) throw missingKey();
    key ??= scryptSync(secretKey, SALT, 32);
    return key;
  };
  return {
    seal(secret, endpointId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", derived(), iv);
      cipher.setAAD(Buffer.from(endpointId));
      const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
      return `v1.${parts.join(".")}`;
    },
    open(stored, endpointId) {
      const [version, iv, tag, body] = stored.split(".");
      try {
        if (version !== "v1" || iv === undefined || tag === undefined || body === undefined) {
          throw new Error("unknown format");
        }
        const decipher = createDecipheriv("aes-256-gcm", derived(), Buffer.from(iv, "base64url"));
        decipher.setAAD(Buffer.from(endpointId));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
          "utf8",
        );
      } catch (err) {
        if (err instanceof SoniqError) throw err;
        throw new SoniqError(
          "SONIQ_INVALID_STATE",
          `The secret of webhook endpoint ${endpointId} cannot be decrypted: was it stored under another secretKey?`,
          { context: { endpointId } },
        );
      }
    },
  };
}
