/** `new Soniq({ webhooks })`: the encryption key for endpoint secrets and where webhooks may go. */

export interface WebhookOptions {
  /**
   * The key endpoint secrets are encrypted with (AES-256-GCM; at least 16 characters). Required to register
   * an endpoint and to deliver; the CLI and the example read it from `SONIQ_SECRET_KEY`. A worker without it
   * (or with another key) logs an error once per endpoint and leaves that endpoint's deliveries pending, no
   * attempt spent, for a worker that has it.
   */
  secretKey?: string;
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
   * deliveries are never deleted. Default 604800000 (7 days); 0 deletes them at the next pass.
   */
  retentionMs?: number;
}

export interface ResolvedWebhookOptions {
  readonly secretKey: string | null;
  readonly allowPrivateNetworks: boolean;
  /** Null: any port. */
  readonly allowedPorts: readonly number[] | null;
  readonly refreshMs: number;
  readonly retentionMs: number;
}

export const DEFAULT_WEBHOOK_OPTIONS: ResolvedWebhookOptions = Object.freeze({
  secretKey: null,
  allowPrivateNetworks: false,
  allowedPorts: null,
  refreshMs: 5000,
  retentionMs: 7 * 24 * 3_600_000,
});

const KEYS = ["secretKey", "allowPrivateNetworks", "allowedPorts", "refreshMs", "retentionMs"];

export function webhookOptionProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [`webhooks must be { ${KEYS.join(", ")} }`];
  }
  const problems = Object.keys(value)
    .filter((k) => !KEYS.includes(k))
    .map((k) => `webhooks has no option "${k}" (it takes ${KEYS.join(", ")})`);
  const v = value as Record<string, unknown>;
  if (v.secretKey !== undefined && (typeof v.secretKey !== "string" || v.secretKey.length < 16)) {
    problems.push("webhooks.secretKey must be a string of at least 16 characters");
  }
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
  return problems;
}

export function resolveWebhookOptions(value: WebhookOptions): ResolvedWebhookOptions {
  return Object.freeze({
    secretKey: value.secretKey ?? null,
    allowPrivateNetworks: value.allowPrivateNetworks ?? false,
    allowedPorts: value.allowedPorts === undefined ? null : Object.freeze([...new Set(value.allowedPorts)]),
    refreshMs: value.refreshMs ?? DEFAULT_WEBHOOK_OPTIONS.refreshMs,
    retentionMs: value.retentionMs ?? DEFAULT_WEBHOOK_OPTIONS.retentionMs,
  });
}
