/**
 * `soniq.webhooks`: register, list, read, change and remove endpoints, read deliveries, redeliver one, test an
 * endpoint, and re-seal the stored secrets under the current key. Every input is checked before anything is
 * written; the target's addresses are checked by resolving its host; the secret is encrypted before it reaches
 * the backend and never comes back. Every write is audited (`webhook.register`, `.update`, `.remove`, `.test`,
 * `.redeliver`, `.reseal`) in the same transaction; an audited URL is `shownUrl`'s (its query values and
 * token-like path segments hidden).
 */

import { isSoniqError, SoniqError } from "../common/errors.js";
import { newJobId } from "../common/ids.js";
import {
  WEBHOOK_DELIVERY_STATUSES,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  type WebhookEvent,
} from "../common/types.js";
import type {
  GuardedBackend,
  StoredWebhookEndpoint,
  WebhookDeliveryQuery,
  WebhookEndpointPatch,
} from "../contract/index.js";
import { filterObject, invalid, optionalString } from "../jobs/queries.js";
import { type ActorOptions, actorOf, audited, auditRecord, recordAudit } from "../observability/audit.js";
import { shownUrl } from "../ops/redaction.js";
import type { WebhookDispatch } from "./dispatch.js";
import {
  DEFAULT_WEBHOOK_MAX_ATTEMPTS,
  DEFAULT_WEBHOOK_RETRY,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  type WebhookRegistration,
  type WebhookUpdate,
  webhookFields,
} from "./input.js";
import type { ResolvedWebhookOptions } from "./options.js";
import { WEBHOOK_METADATA } from "./payloads.js";
import { missingSecretKey, type SecretBox } from "./secrets.js";
import { sendWebhook } from "./sender.js";
import { assertAllowedPort, assertPublicTarget } from "./targets.js";

/** `webhooks.deliveries(filter)`. */
export interface WebhookDeliveryFilter {
  endpointId?: string;
  status?: WebhookDeliveryStatus;
  event?: string;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** What `webhooks.test(id)` answers: the outcome of one signed `webhook.test` request, sent now. */
export interface WebhookTestResult {
  ok: boolean;
  /** The HTTP status, or null when no answer came (refused, timed out, refused target). */
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** `webhooks.reseal(options)`. */
export interface WebhookResealOptions extends ActorOptions {
  /** Open every secret and report what would be re-sealed; write nothing (audit rows with outcome `dry_run`). */
  dryRun?: boolean;
}

/** A secret `webhooks.reseal()` could not re-seal, left as it was. */
export interface WebhookResealFailure {
  endpointId: string;
  /** The key id the stored secret names (null: a `v1` secret, sealed under a single key). */
  keyId: string | null;
  error: string;
}

/** What `webhooks.reseal()` did (with `dryRun`: would do). */
export interface WebhookResealResult {
  /** The key secrets are sealed under now: the keyring's `current`; null for a single `secretKey`. */
  keyId: string | null;
  /** The endpoints whose secret was re-sealed under it (with `dryRun`: would be), oldest first. */
  resealed: string[];
  /** How many endpoints' secrets were sealed under it already. */
  alreadyCurrent: number;
  /** The secrets no key of this instance opens (or that kept changing meanwhile), left as they were. */
  failed: WebhookResealFailure[];
  dryRun: boolean;
}

/** How often a re-seal reads an endpoint again when its secret changed between the read and the write. */
const RESEAL_TRIES = 3;

/** The endpoint as the API shows it: everything but the secret. */
export function publicEndpoint(stored: StoredWebhookEndpoint): WebhookEndpoint {
  const { secretCipher: _hidden, ...rest } = stored;
  return {
    ...rest,
    events: [...rest.events],
    headers: { ...rest.headers },
    hasSecret: _hidden.length > 0,
  };
}

export function deliveryQuery(filter: WebhookDeliveryFilter | undefined): WebhookDeliveryQuery {
  const what = "webhooks.deliveries(filter)";
  const f = filterObject(filter, what, ["endpointId", "status", "event", "limit"]);
  const status = optionalString(f.status, `${what}.status`);
  if (status !== null && !(WEBHOOK_DELIVERY_STATUSES as readonly string[]).includes(status)) {
    throw invalid(`${what}.status`, `expected one of ${WEBHOOK_DELIVERY_STATUSES.join(", ")}`, status);
  }
  const limit = f.limit ?? 100;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw invalid(`${what}.limit`, "expected an integer >= 1", limit);
  }
  return {
    endpointId: optionalString(f.endpointId, `${what}.endpointId`),
    status: status as WebhookDeliveryStatus | null,
    event: optionalString(f.event, `${what}.event`),
    limit: Math.min(limit, 1000),
  };
}

function rejecting<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err);
  }
}

export class WebhookService {
  constructor(
    private readonly backend: GuardedBackend<unknown>,
    private readonly options: ResolvedWebhookOptions,
    private readonly secrets: SecretBox,
    private readonly dispatch: WebhookDispatch,
  ) {}

  /**
   * Registers an endpoint: `{ url, events, secret, headers, description, active, maxAttempts, timeoutMs,
   * retry }`. Bad input is `SONIQ_INVALID_ARGUMENT` (naming the field), a private or loopback target (or one
   * on a port outside `allowedPorts`) `SONIQ_WEBHOOK_TARGET_REFUSED`, a missing `secretKey`
   * `SONIQ_INVALID_OPTIONS`; nothing is written then.
   */
  async register(input: WebhookRegistration, options?: ActorOptions): Promise<WebhookEndpoint> {
    const fields = webhookFields(input, "webhooks.register(input)", true);
    const actor = actorOf(options, "webhooks.register(options)");
    await this.#assertTarget(new URL(fields.url as string), "webhooks.register(input).url");
    const id = newJobId();
    const now = new Date();
    const stored: StoredWebhookEndpoint = {
      id,
      url: fields.url as string,
      events: fields.events as WebhookEvent[],
      headers: fields.headers ?? {},
      description: fields.description ?? null,
      active: fields.active ?? true,
      maxAttempts: fields.maxAttempts ?? DEFAULT_WEBHOOK_MAX_ATTEMPTS,
      timeoutMs: fields.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      retry: fields.retry ?? DEFAULT_WEBHOOK_RETRY,
      secretCipher: this.secrets.seal(fields.secret as string, id),
      createdAt: now,
      updatedAt: now,
    };
    const params = { url: shownUrl(stored.url), events: stored.events, active: stored.active };
    await this.backend.webhooks.createEndpoint(stored, auditRecord("webhook.register", actor, id, params));
    await this.dispatch.refresh(true);
    const created = await this.backend.webhooks.getEndpoint(id);
    return publicEndpoint(created ?? stored);
  }

  /** A target `register` and `update` accept: on an allowed port, on public addresses (unless allowed). */
  async #assertTarget(url: URL, what: string): Promise<void> {
    assertAllowedPort(url, this.options.allowedPorts, what);
    await assertPublicTarget(url, this.options.allowPrivateNetworks, what);
  }

  /** Every endpoint, oldest first (secrets left out). */
  async list(): Promise<WebhookEndpoint[]> {
    return (await this.backend.webhooks.listEndpoints()).map(publicEndpoint);
  }

  async get(id: string): Promise<WebhookEndpoint | null> {
    const stored = await this.backend.webhooks.getEndpoint(id);
    return stored === null ? null : publicEndpoint(stored);
  }

  /**
   * Changes an endpoint: any field of `register` (a new `secret` rotates it). Null when there is none. Checked
   * as `register` checks, before anything is written.
   */
  async update(id: string, patch: WebhookUpdate, options?: ActorOptions): Promise<WebhookEndpoint | null> {
    const fields = webhookFields(patch, "webhooks.update(patch)", false);
    const actor = actorOf(options, "webhooks.update(options)");
    if (fields.url !== undefined) await this.#assertTarget(new URL(fields.url), "webhooks.update(patch).url");
    const { secret, ...rest } = fields;
    const change: WebhookEndpointPatch = { ...rest };
    if (secret !== undefined) change.secretCipher = this.secrets.seal(secret, String(id));
    const params: Record<string, unknown> = {
      ...rest,
      ...(secret === undefined ? {} : { secret: "[rotated]" }),
    };
    delete params.headers;
    if (rest.url !== undefined) params.url = shownUrl(rest.url);
    const record = auditRecord("webhook.update", actor, String(id), params);
    const updated = await audited(
      this.backend,
      record,
      (r) => this.backend.webhooks.updateEndpoint(id, change, r),
      (result) => result !== null,
    );
    await this.dispatch.refresh(true);
    return updated === null ? null : publicEndpoint(updated);
  }

  /** Removes an endpoint and its deliveries. False when there was none. */
  async remove(id: string, options?: ActorOptions): Promise<boolean> {
    const actor = actorOf(options, "webhooks.remove(options)");
    const record = auditRecord("webhook.remove", actor, String(id), null);
    const removed = await audited(
      this.backend,
      record,
      (r) => this.backend.webhooks.removeEndpoint(id, r),
      Boolean,
    );
    await this.dispatch.refresh(true);
    return removed;
  }

  /** Deliveries, newest first: `{ endpointId, status, event, limit }` (limit default 100, at most 1000). */
  deliveries(filter?: WebhookDeliveryFilter): Promise<WebhookDelivery[]> {
    return rejecting(() => this.backend.webhooks.listDeliveries(deliveryQuery(filter)));
  }

  delivery(id: string): Promise<WebhookDelivery | null> {
    return this.backend.webhooks.getDelivery(id);
  }

  /**
   * Sends a delivered or failed delivery again (same id, due now, a fresh `maxAttempts` budget). False when
   * there is no such delivery or it is still pending. Audited `webhook.redeliver`. A delivery of an inactive
   * endpoint is refused with `SONIQ_INVALID_STATE` (it would only be parked): activate the endpoint first.
   */
  async redeliver(id: string, options?: ActorOptions): Promise<boolean> {
    const actor = actorOf(options, "webhooks.redeliver(options)");
    const delivery = await this.backend.webhooks.getDelivery(id);
    const endpoint = delivery === null ? null : await this.backend.webhooks.getEndpoint(delivery.endpointId);
    if (endpoint !== null && !endpoint.active) {
      throw new SoniqError(
        "SONIQ_INVALID_STATE",
        `webhooks.redeliver: the endpoint ${endpoint.id} of delivery ${id} is inactive, so the delivery would not be sent; activate it first with webhooks.update("${endpoint.id}", { active: true }).`,
        { context: { deliveryId: id, endpointId: endpoint.id } },
      );
    }
    const record = auditRecord("webhook.redeliver", actor, String(id), null);
    const done = await audited(
      this.backend,
      record,
      (r) => this.backend.webhooks.redeliver(id, r),
      Boolean,
      () => "not_found_or_pending",
    );
    if (done) this.dispatch.notify();
    return done;
  }

  /**
   * Re-seals every stored endpoint secret that is not sealed under the current key (`webhooks.secretKey`: the
   * keyring's `current`; with a single key, the `v1` format) under it, so an old key can leave the keyring.
   * Each endpoint is one write, guarded by the ciphertext it read (a secret rotated meanwhile is read again, not
   * overwritten), audited `webhook.reseal` with it (params `{ fromKeyId, toKeyId }`). A secret no key of this
   * instance opens is left as it is and reported in `failed` (audited with outcome `failed`); the others go on.
   * `dryRun` writes nothing but the audit rows (outcome `dry_run`). Without a `secretKey`: `SONIQ_INVALID_OPTIONS`.
   */
  async reseal(options?: WebhookResealOptions): Promise<WebhookResealResult> {
    const actor = actorOf(options, "webhooks.reseal(options)", ["dryRun"]);
    const dryRun = (options as { dryRun?: unknown } | undefined)?.dryRun;
    if (dryRun !== undefined && typeof dryRun !== "boolean") {
      throw invalid("webhooks.reseal(options).dryRun", "expected a boolean", dryRun);
    }
    if (this.options.secretKey === null) throw missingSecretKey();
    const result: WebhookResealResult = {
      keyId: this.secrets.currentKeyId,
      resealed: [],
      alreadyCurrent: 0,
      failed: [],
      dryRun: dryRun === true,
    };
    for (const endpoint of await this.backend.webhooks.listEndpoints()) {
      await this.#resealOne(endpoint, actor, result);
    }
    if (!result.dryRun && result.resealed.length > 0) await this.dispatch.refresh(true);
    return result;
  }

  /** Re-seals one endpoint's secret unless it is current, reading it again when it changed meanwhile. */
  async #resealOne(listed: StoredWebhookEndpoint, actor: string, result: WebhookResealResult): Promise<void> {
    let row: StoredWebhookEndpoint | null = listed;
    for (let tries = 0; row !== null && tries < RESEAL_TRIES; tries++) {
      if (this.secrets.isCurrent(row.secretCipher)) {
        result.alreadyCurrent++;
        return;
      }
      const fromKeyId = this.secrets.keyIdOf(row.secretCipher);
      const record = auditRecord("webhook.reseal", actor, row.id, { fromKeyId, toKeyId: result.keyId });
      let secret: string;
      try {
        secret = this.secrets.open(row.secretCipher, row.id);
      } catch (err) {
        if (!isSoniqError(err, "SONIQ_INVALID_STATE")) throw err;
        result.failed.push({ endpointId: row.id, keyId: fromKeyId, error: err.message });
        await recordAudit(this.backend, { ...record, outcome: "failed", details: { error: err.message } });
        return;
      }
      if (result.dryRun) {
        result.resealed.push(row.id);
        await recordAudit(this.backend, { ...record, outcome: "dry_run" });
        return;
      }
      const sealed = { secretCipher: this.secrets.seal(secret, row.id) };
      const guard = { secretCipher: row.secretCipher };
      if ((await this.backend.webhooks.updateEndpoint(row.id, sealed, record, guard)) !== null) {
        result.resealed.push(row.id);
        return;
      }
      // Removed, or its secret changed (rotated, or re-sealed by another call) since it was read: look again.
      row = await this.backend.webhooks.getEndpoint(row.id);
    }
    if (row === null) return;
    if (this.secrets.isCurrent(row.secretCipher)) {
      result.alreadyCurrent++;
      return;
    }
    const error = `its secret changed ${RESEAL_TRIES} times while being re-sealed; run webhooks.reseal() again`;
    result.failed.push({ endpointId: row.id, keyId: this.secrets.keyIdOf(row.secretCipher), error });
  }

  /**
   * Sends one signed `webhook.test` request to the endpoint now (not stored as a delivery, not retried) and
   * reports what came of it. Null when there is no such endpoint. Audited `webhook.test` with the outcome.
   */
  async test(id: string, options?: ActorOptions): Promise<WebhookTestResult | null> {
    const actor = actorOf(options, "webhooks.test(options)");
    const endpoint = await this.backend.webhooks.getEndpoint(id);
    const record = auditRecord("webhook.test", actor, String(id), null);
    if (endpoint === null) {
      await recordAudit(this.backend, { ...record, outcome: "not_found" });
      return null;
    }
    const started = performance.now();
    const payload = {
      event: "webhook.test" as const,
      timestamp: new Date().toISOString(),
      data: { endpointId: endpoint.id },
      metadata: { ...WEBHOOK_METADATA },
    };
    const outcome = await sendWebhook(
      endpoint,
      { id: newJobId(), event: "webhook.test", payload },
      {
        secrets: this.secrets,
        allowPrivateNetworks: this.options.allowPrivateNetworks,
        allowedPorts: this.options.allowedPorts,
      },
    );
    const result = {
      ok: outcome.ok,
      status: outcome.status,
      error: outcome.error,
      durationMs: Math.round(performance.now() - started),
    };
    await recordAudit(this.backend, {
      ...record,
      outcome: outcome.ok ? "ok" : "failed",
      details: { status: outcome.status, error: outcome.error },
    });
    return result;
  }
}
