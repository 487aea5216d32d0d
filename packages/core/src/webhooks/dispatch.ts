/**
 * Which endpoints an event goes to, from a cached endpoint list. The list is read at most every
 * `webhooks.refreshMs` (and at once after a change made through this instance), so an event costs no query:
 * with no endpoint registered, `rows()` is an empty array and nothing is written (jobs pay nothing). The
 * rows it returns travel with the write that makes the event (an outbox) or are written on their own.
 * Processes see endpoints registered elsewhere within one refresh.
 */

import { newJobId } from "../common/ids.js";
import type { Logger } from "../common/logger.js";
import type { WebhookDeliveryEvent, WebhookEvent } from "../common/types.js";
import type { GuardedBackend, NewWebhookDelivery, StoredWebhookEndpoint } from "../contract/index.js";
import { WEBHOOK_METADATA } from "./payloads.js";

const NONE: readonly NewWebhookDelivery[] = Object.freeze([]);

export class WebhookDispatch {
  #endpoints: readonly StoredWebhookEndpoint[] = [];
  #loadedAt = Number.NEGATIVE_INFINITY;
  #loading: Promise<void> | null = null;
  readonly #listeners = new Set<() => void>();

  constructor(
    private readonly backend: GuardedBackend<unknown>,
    private readonly refreshMs: number,
    private readonly logger: Logger,
  ) {}

  /** Re-reads the endpoint list when it is older than `refreshMs` (always with `force`). Never rejects. */
  refresh(force = false): Promise<void> {
    if (!force && performance.now() - this.#loadedAt < this.refreshMs) return Promise.resolve();
    // A backend without the webhooks capability has no endpoints: no event is delivered anywhere.
    if (!this.backend.supports("webhooks")) return Promise.resolve();
    this.#loading ??= this.backend.webhooks
      .listEndpoints()
      .then(
        (list) => {
          this.#endpoints = list;
          this.#loadedAt = performance.now();
        },
        (err: unknown) =>
          this.logger.warn({ err }, "could not read the webhook endpoints; keeping the last list"),
      )
      .finally(() => {
        this.#loading = null;
      });
    return this.#loading;
  }

  /** Whether any endpoint (active or not) exists, as last read. */
  get hasEndpoints(): boolean {
    return this.#endpoints.length > 0;
  }

  /** Every endpoint (active or not), as last read. */
  get endpoints(): readonly StoredWebhookEndpoint[] {
    return this.#endpoints;
  }

  /** The cached endpoint with this id. */
  endpoint(id: string): StoredWebhookEndpoint | undefined {
    return this.#endpoints.find((e) => e.id === id);
  }

  /** The longest endpoint timeout (ms), for a claim's lease. */
  get longestTimeoutMs(): number {
    return this.#endpoints.reduce((max, e) => Math.max(max, e.timeoutMs), 0);
  }

  /** True when an active endpoint receives `event`. */
  wants(event: WebhookEvent): boolean {
    return this.#endpoints.length > 0 && this.#endpoints.some((e) => e.active && e.events.includes(event));
  }

  /** One delivery row per active endpoint that receives `event` (an empty array when none does). */
  rows(
    event: WebhookEvent,
    data: () => Record<string, unknown>,
    at: Date = new Date(),
  ): readonly NewWebhookDelivery[] {
    if (this.#endpoints.length === 0) return NONE;
    const targets = this.#endpoints.filter((e) => e.active && e.events.includes(event));
    if (targets.length === 0) return NONE;
    const payload = { event, timestamp: at.toISOString(), data: data(), metadata: { ...WEBHOOK_METADATA } };
    return targets.map((e) => delivery(e, event, payload));
  }

  /**
   * Fires `event` on its own: its deliveries are written in a transaction of their own (for an event whose
   * change is already committed). An event written with a change of its own takes `rows()` instead and hands
   * them to that transaction (as `flow.finished` does with `flows.notifyFinished`), so both commit together.
   */
  async emit(event: WebhookEvent, data: () => Record<string, unknown>): Promise<number> {
    await this.refresh();
    const rows = this.rows(event, data);
    if (rows.length === 0) return 0;
    await this.backend.webhooks.enqueue(rows);
    this.notify();
    return rows.length;
  }

  /** Wakes this process's deliverers (deliveries were just written). */
  notify(): void {
    for (const listener of this.#listeners) listener();
  }

  onWritten(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

function delivery(
  endpoint: StoredWebhookEndpoint,
  event: WebhookDeliveryEvent,
  payload: NewWebhookDelivery["payload"],
): NewWebhookDelivery {
  return { id: newJobId(), endpointId: endpoint.id, event, payload, maxAttempts: endpoint.maxAttempts };
}
