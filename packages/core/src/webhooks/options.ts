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
  readonly refreshMs: number;
  readonly retentionMs: number;
}

export const DEFAULT_WEBHOOK_OPTIONS: ResolvedWebhookOptions = Object.freeze({
  secretKey: null,
  allowPrivateNetworks: false,
  refreshMs: 5000,
  retentionMs: 7 * 24 * 3_600_000,
});

const KEYS = ["secretKey", "allowPrivateNetworks", "refreshMs", "retentionMs"];

export function webhookOptionProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return ["webhooks must be { secretKey, allowPrivateNetworks, refreshMs, retentionMs }"];
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
    refreshMs: value.refreshMs ?? DEFAULT_WEBHOOK_OPTIONS.refreshMs,
    retentionMs: value.retentionMs ?? DEFAULT_WEBHOOK_OPTIONS.retentionMs,
  });
}
