/**
 * The `webhooks` facet: endpoints (`soniq_webhook_endpoints`) and the delivery outbox
 * (`soniq_webhook_deliveries`). Core decides which endpoints an event goes to, builds the rows, signs and
 * sends them; a backend stores them. Rows an event produces travel with the write that makes the event
 * (`Settlement.deliveries`, `ReplayRequest.deliveries`, `TickRecord.deliveries`) and commit with it, so a
 * crash never loses an event nor sends one that did not happen. Events with no other write (a queue's
 * backlog, a test ping) are written with `enqueue`.
 */

import type {
  WebhookDelivery,
  WebhookDeliveryEvent,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookPayload,
} from "../common/types.js";
import type { AuditRecord } from "./audit.js";

/** An endpoint as stored: the API's shape, with the secret's ciphertext instead of `hasSecret`. */
export interface StoredWebhookEndpoint extends Omit<WebhookEndpoint, "hasSecret"> {
  /** The secret encrypted by core (AES-256-GCM); a backend never sees the plain secret. */
  secretCipher: string;
}

/** A normalised change to an endpoint: an `undefined` key keeps the stored value. */
export type WebhookEndpointPatch = Partial<
  Pick<
    StoredWebhookEndpoint,
    | "url"
    | "events"
    | "headers"
    | "description"
    | "active"
    | "maxAttempts"
    | "timeoutMs"
    | "retry"
    | "secretCipher"
  >
>;

/** A delivery to write: status `pending`, attempts 0, due now (by the backend's clock). */
export interface NewWebhookDelivery {
  /** Fresh UUID chosen by core; stable across every attempt. */
  id: string;
  endpointId: string;
  event: WebhookDeliveryEvent;
  payload: WebhookPayload;
  maxAttempts: number;
}

/** A normalised delivery filter: `null` = no filter on it. */
export interface WebhookDeliveryQuery {
  endpointId: string | null;
  status: WebhookDeliveryStatus | null;
  event: string | null;
  /** 1..1000. */
  limit: number;
}

export interface DeliveryClaimRequest {
  /** Most deliveries to take (>= 1). */
  limit: number;
  /**
   * How long the taken deliveries stay out of other claims: `next_attempt_at` moves to now + leaseMs. A
   * process that dies mid-attempt leaves them due again after that (at-least-once).
   */
  leaseMs: number;
  /**
   * Most deliveries of any one endpoint to take (>= 1; each endpoint's oldest due first), so one endpoint's
   * backlog never fills a claim. Absent: no cap per endpoint.
   */
  perEndpoint?: number;
  /** Endpoints whose deliveries are left where they are (busy or resting in the claimer). Absent: none. */
  exceptEndpoints?: readonly string[];
}

/** What one attempt came to, fenced by `attempt` (the delivery's `attempts` as the claim returned it). */
export interface DeliveryAttemptResult {
  id: string;
  attempt: number;
  /** `pending` = retry after `delayMs`; `delivered`; `failed` (no attempts left). */
  status: WebhookDeliveryStatus;
  delayMs: number;
  lastError: string | null;
  responseStatus: number | null;
  responseBody: string | null;
}

/** How many deliveries of one endpoint are pending (`countPending`). */
export interface PendingDeliveryCount {
  endpointId: string;
  /** At least 1. */
  pending: number;
}

/** A condition on an endpoint write (`updateEndpoint`): the row as the caller read it. */
export interface EndpointWriteGuard {
  /** Write only while the stored `secretCipher` is still this one (a re-seal must not undo a rotation). */
  secretCipher: string;
}

export interface WebhooksFacet {
  /** Insert an endpoint, writing `audit` with it. */
  createEndpoint(endpoint: StoredWebhookEndpoint, audit: AuditRecord): Promise<void>;
  /**
   * Merge `patch` (and `updated_at` = now), writing `audit` when the endpoint exists (and, with `guard`, its
   * stored `secretCipher` is `guard.secretCipher`). Null when it does not (or the guard did not match: nothing is
   * written, no audit row either).
   */
  updateEndpoint(
    id: string,
    patch: WebhookEndpointPatch,
    audit: AuditRecord,
    guard?: EndpointWriteGuard,
  ): Promise<StoredWebhookEndpoint | null>;
  /** Delete the endpoint and its deliveries, writing `audit` when it existed. False when it did not. */
  removeEndpoint(id: string, audit: AuditRecord): Promise<boolean>;
  getEndpoint(id: string): Promise<StoredWebhookEndpoint | null>;
  /** Every endpoint, oldest first (created_at, then id). */
  listEndpoints(): Promise<StoredWebhookEndpoint[]>;
  /** Write deliveries on their own (events that change nothing else). */
  enqueue(deliveries: readonly NewWebhookDelivery[]): Promise<void>;
  /** Newest first (created_at descending, then id descending). */
  listDeliveries(query: WebhookDeliveryQuery): Promise<WebhookDelivery[]>;
  getDelivery(id: string): Promise<WebhookDelivery | null>;
  /**
   * Take up to `limit` due pending deliveries (next_attempt_at <= now) of active endpoints, oldest due first,
   * at most `perEndpoint` of any one endpoint and none of `exceptEndpoints`, skipping rows other claimers hold:
   * attempts + 1, next_attempt_at = now + leaseMs. Returns them as updated. An inactive endpoint's pending
   * deliveries are parked: never claimed while it is inactive, due again (unchanged) once it is active.
   */
  claimDue(request: DeliveryClaimRequest): Promise<WebhookDelivery[]>;
  /**
   * Store an attempt's outcome, only while the row is pending with `attempts = result.attempt`:
   * `delivered` sets delivered_at = now; `pending` sets next_attempt_at = now + delayMs; `failed` clears
   * next_attempt_at. False when the fence did not match (a redelivery or another attempt got there first).
   */
  recordAttempt(result: DeliveryAttemptResult): Promise<boolean>;
  /**
   * A delivered or failed delivery back to pending, due now, attempts 0 (a fresh `max_attempts` budget),
   * writing `audit` with it. False when there is no such row or it is pending already.
   */
  redeliver(id: string, audit: AuditRecord): Promise<boolean>;
  /**
   * Delete the finished deliveries (delivered or failed) whose last write (`updated_at`) is more than
   * `olderThanMs` old; pending ones stay, whatever their age. Returns how many were deleted. Core's maintenance
   * calls it with `webhooks.retentionMs`, so the outbox does not grow without bound.
   */
  prune(olderThanMs: number): Promise<number>;
  /**
   * End as failed every pending delivery created more than `olderThanMs` ago, whatever attempts it has left (a
   * claimed one too: its attempt's `recordAttempt` then finds it no longer pending): status `failed`,
   * next_attempt_at cleared, `last_error` = `lastError`, updated_at = now (so `prune` keeps it for its retention
   * from now), attempts and the last response kept. Returns how many it ended. Core's maintenance calls it with
   * `webhooks.pendingMaxAgeMs`, so pending deliveries do not pile up without bound.
   */
  expirePending(olderThanMs: number, lastError: string): Promise<number>;
  /** How many deliveries are pending, per endpoint that has any (in no particular order). */
  countPending(): Promise<PendingDeliveryCount[]>;
}
