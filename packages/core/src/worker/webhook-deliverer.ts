/**
 * A worker's webhook duty: keep the instance's endpoint list fresh (so the events its jobs make find their
 * endpoints) and, unless `deliverWebhooks` is false, send due deliveries. Each pass claims due deliveries in
 * batches (a claimed delivery stays out of other claims for the longest endpoint timeout plus 30 s, so a
 * process that dies mid-attempt leaves it due again: at-least-once), POSTs them, and stores each attempt's
 * outcome fenced by its attempt number. Passes run every `pollIntervalMs` (jittered) and at once when this
 * process wrote deliveries. Nothing is claimed while no endpoint exists. `stop()` aborts attempts in flight
 * (each counts as a failed attempt and is retried by its endpoint's delays), so a stop never waits for a
 * slow receiver. `runOnce` has no passes of its own: it runs one (`deliverNow`) after its jobs.
 */
import type { Runtime } from "../app/runtime.js";
import type { WebhookDelivery } from "../common/types.js";
import { attemptResult, sendWebhook } from "../webhooks/sender.js";

const BATCH = 10;
const LEASE_MARGIN_MS = 30_000;

export class WebhookDeliverer {
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  #off: (() => void) | null = null;
  /** Aborts attempts in flight when the worker stops (they count as failed attempts and retry). */
  readonly #abort = new AbortController();

  constructor(
    private readonly rt: Runtime,
    private readonly deliver: boolean,
    private readonly pollIntervalMs: number,
  ) {}

  start(): void {
    if (this.deliver) this.#off = this.rt.webhooks.onWritten(() => this.#kick());
    this.#kick();
  }

  /** One pass now, awaited (`runOnce`): sends what is due, including the deliveries this process just wrote. */
  async deliverNow(): Promise<void> {
    await this.#pass;
    if (!this.#stopped) await this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#off?.();
    this.#abort.abort();
    await this.#pass;
  }

  #kick(): void {
    if (this.#stopped) return;
    if (this.#pass !== null) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#pass = this.#run().finally(() => {
      this.#pass = null;
      if (this.#stopped) return;
      if (this.#again) {
        this.#again = false;
        this.#kick();
        return;
      }
      const delay = Math.round(this.pollIntervalMs * (0.8 + Math.random() * 0.4));
      this.#timer = setTimeout(() => this.#kick(), delay);
      this.#timer.unref();
    });
  }

  async #run(): Promise<void> {
    const { rt } = this;
    await rt.webhooks.refresh();
    if (!this.deliver || !rt.webhooks.hasEndpoints) return;
    try {
      for (;;) {
        const leaseMs = rt.webhooks.longestTimeoutMs + LEASE_MARGIN_MS;
        const batch = await rt.backend.webhooks.claimDue({ limit: BATCH, leaseMs });
        await Promise.all(batch.map((d) => this.#attempt(d)));
        if (batch.length < BATCH || this.#stopped) return;
      }
    } catch (err) {
      rt.logger.warn({ err }, "webhook delivery pass failed; retrying at the next poll");
    }
  }

  async #attempt(delivery: WebhookDelivery): Promise<void> {
    const { rt } = this;
    const endpoint =
      rt.webhooks.endpoint(delivery.endpointId) ??
      (await rt.backend.webhooks.getEndpoint(delivery.endpointId)) ??
      undefined;
    const outcome =
      endpoint === undefined
        ? { ok: false, status: null, body: null, error: "the endpoint was removed" }
        : await sendWebhook(endpoint, delivery, {
            secrets: rt.secrets,
            allowPrivateNetworks: rt.options.webhooks.allowPrivateNetworks,
            signal: this.#abort.signal,
          });
    const result = attemptResult(endpoint, delivery, outcome);
    const stored = await rt.backend.webhooks.recordAttempt(result);
    const log = { deliveryId: delivery.id, event: delivery.event, endpointId: delivery.endpointId };
    if (!stored) rt.logger.debug(log, "webhook attempt not stored: the delivery changed meanwhile");
    else if (result.status === "delivered")
      rt.logger.debug({ ...log, status: outcome.status }, "webhook delivered");
    else {
      rt.logger.warn(
        {
          ...log,
          attempt: delivery.attempts,
          error: outcome.error,
          retryInMs: result.status === "pending" ? result.delayMs : null,
        },
        result.status === "failed" ? "webhook delivery failed for good" : "webhook attempt failed; retrying",
      );
    }
  }
}
