/**
 * A worker's webhook duty: keep the instance's endpoint list fresh (so the events its jobs make find their
 * endpoints) and, unless `deliverWebhooks` is false, send due deliveries. A pass claims due deliveries (a
 * claimed delivery stays out of other claims for the longest endpoint timeout plus 30 s, so a process that
 * dies mid-attempt leaves it due again: at-least-once), starts their attempts and returns without waiting for
 * them: each attempt stores its outcome fenced by its attempt number and, when it ends, makes room for the
 * next pass. So endpoints proceed independently: at most `MAX_IN_FLIGHT` attempts run at once, at most
 * `PER_ENDPOINT` of any one endpoint (an endpoint with attempts in flight is left out of claims), and a slow or
 * black-holed receiver holds only its own. An endpoint whose last `BREAKER_THRESHOLD` attempts failed rests
 * for `BREAKER_COOL_DOWN_MS` (its deliveries stay pending, unclaimed, no attempt spent; breaker.ts). An
 * inactive endpoint's deliveries are never claimed (parked). An endpoint whose sealed secret this worker
 * cannot open (no `webhooks.secretKey`, or none of its keys sealed it) is left out of claims the
 * same way, said once as an error: its deliveries stay pending, no attempt spent, for a worker that holds the
 * key (`#sealed`). Passes run every `pollIntervalMs` (jittered), at
 * once when this process wrote deliveries and when an attempt ends. Nothing is claimed while no endpoint
 * exists. `stop()` aborts attempts in flight, their DNS checks included (each counts as a failed attempt and
 * is retried by its endpoint's delays), so a stop never waits for a slow receiver or resolver. `runOnce` has
 * no passes of its own: it runs them (`deliverNow`) after its jobs until nothing due is left.
 */
import type { Runtime } from "../app/runtime.js";
import type { WebhookDelivery } from "../common/types.js";
import type { StoredWebhookEndpoint } from "../contract/index.js";
import { EndpointBreaker } from "../webhooks/breaker.js";
import { attemptResult, sendWebhook } from "../webhooks/sender.js";

/** Attempts in flight at once in one worker, across endpoints. */
const MAX_IN_FLIGHT = 10;
/** Attempts in flight at once in one worker for one endpoint. */
const PER_ENDPOINT = 2;
/** Consecutive failed attempts that rest an endpoint, and for how long. */
const BREAKER_THRESHOLD = 5;
const BREAKER_COOL_DOWN_MS = 60_000;
const LEASE_MARGIN_MS = 30_000;

export class WebhookDeliverer {
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<unknown> | null = null;
  #again = false;
  #stopped = false;
  #started = false;
  #off: (() => void) | null = null;
  /** Attempts in flight, and how many of each endpoint. */
  readonly #attempts = new Set<Promise<void>>();
  readonly #busy = new Map<string, number>();
  readonly #breaker = new EndpointBreaker({
    threshold: BREAKER_THRESHOLD,
    coolDownMs: BREAKER_COOL_DOWN_MS,
  });
  /** Whether this worker's key opens each endpoint's secret, by the ciphertext it tried (a new secret is tried again). */
  #opens = new Map<string, { cipher: string; opens: boolean }>();
  /** Aborts attempts in flight when the worker stops (they count as failed attempts and retry). */
  readonly #abort = new AbortController();

  constructor(
    private readonly rt: Runtime,
    private readonly deliver: boolean,
    private readonly pollIntervalMs: number,
  ) {}

  start(): void {
    this.#started = true;
    if (this.deliver) this.#off = this.rt.webhooks.onWritten(() => this.#kick());
    this.#kick();
  }

  /**
   * Passes now, awaited with their attempts (`runOnce`): sends what is due, including the deliveries this
   * process just wrote, until a pass finds nothing more to start.
   */
  async deliverNow(): Promise<void> {
    await this.#pass;
    while (!this.#stopped) {
      const started = await this.#run();
      if (started === 0 && this.#attempts.size === 0) return;
      await Promise.all(this.#attempts);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#off?.();
    this.#abort.abort();
    await this.#pass;
    await Promise.all(this.#attempts);
  }

  #kick(): void {
    if (this.#stopped || !this.#started) return;
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

  /** Claims what is due and may start now, starts those attempts, and returns how many it started. */
  async #run(): Promise<number> {
    const { rt } = this;
    await rt.webhooks.refresh();
    if (!this.deliver || !rt.webhooks.hasEndpoints) return 0;
    let started = 0;
    try {
      while (!this.#stopped) {
        const room = MAX_IN_FLIGHT - this.#attempts.size;
        if (room <= 0) break;
        const batch = await rt.backend.webhooks.claimDue({
          limit: room,
          leaseMs: rt.webhooks.longestTimeoutMs + LEASE_MARGIN_MS,
          perEndpoint: PER_ENDPOINT,
          exceptEndpoints: [...this.#busy.keys(), ...this.#breaker.resting(), ...this.#sealed()],
        });
        if (batch.length === 0) break;
        for (const delivery of batch) this.#launch(delivery);
        started += batch.length;
      }
    } catch (err) {
      rt.logger.warn({ err }, "webhook delivery pass failed; retrying at the next poll");
    }
    return started;
  }

  /** The active endpoints whose secret this worker cannot open (their deliveries are left out of claims). */
  #sealed(): string[] {
    const known = this.#opens;
    this.#opens = new Map();
    const sealed: string[] = [];
    for (const endpoint of this.rt.webhooks.endpoints) {
      if (!endpoint.active) continue;
      if (!this.#canOpen(endpoint, known.get(endpoint.id))) sealed.push(endpoint.id);
    }
    return sealed;
  }

  /**
   * Whether this worker's key opens the endpoint's secret, remembered per ciphertext (`known`: the last check),
   * so the error is said once per endpoint and secret, not once per pass.
   */
  #canOpen(endpoint: StoredWebhookEndpoint, known = this.#opens.get(endpoint.id)): boolean {
    if (known?.cipher === endpoint.secretCipher) {
      this.#opens.set(endpoint.id, known);
      return known.opens;
    }
    let opens = true;
    try {
      this.rt.secrets.open(endpoint.secretCipher, endpoint.id);
    } catch (err) {
      opens = false;
      this.rt.logger.error(
        { err, endpointId: endpoint.id },
        "this worker cannot open the webhook endpoint's secret (give webhooks.secretKey the key it was sealed under: as the key, or in the keyring's keys); its deliveries stay pending for a worker that has it",
      );
    }
    this.#opens.set(endpoint.id, { cipher: endpoint.secretCipher, opens });
    return opens;
  }

  /** Starts one attempt, counted in flight until it has stored its outcome; its end wakes a pass. */
  #launch(delivery: WebhookDelivery): void {
    const { endpointId } = delivery;
    this.#busy.set(endpointId, (this.#busy.get(endpointId) ?? 0) + 1);
    const attempt: Promise<void> = this.#attempt(delivery)
      .catch((err: unknown) =>
        this.rt.logger.warn(
          { err, deliveryId: delivery.id, endpointId },
          "webhook attempt could not be stored; the delivery is due again when its claim lapses",
        ),
      )
      .finally(() => {
        this.#attempts.delete(attempt);
        const left = (this.#busy.get(endpointId) ?? 1) - 1;
        if (left > 0) this.#busy.set(endpointId, left);
        else this.#busy.delete(endpointId);
        this.#kick();
      });
    this.#attempts.add(attempt);
  }

  async #attempt(delivery: WebhookDelivery): Promise<void> {
    const { rt } = this;
    const endpoint =
      rt.webhooks.endpoint(delivery.endpointId) ??
      (await rt.backend.webhooks.getEndpoint(delivery.endpointId)) ??
      undefined;
    if (endpoint !== undefined && !this.#canOpen(endpoint)) {
      // Claimed before this worker knew the endpoint (its list is up to `refreshMs` old): the claim took an
      // attempt, but a missing key is not the receiver's failure, so the delivery stays pending (never
      // `failed` for it) and is due again at once; with the list re-read, this worker leaves it out of claims.
      const result = attemptResult(endpoint, delivery, {
        ok: false,
        status: null,
        body: null,
        error: "not sent: this worker's webhooks.secretKey does not open the endpoint's secret",
      });
      await rt.backend.webhooks.recordAttempt({ ...result, status: "pending", delayMs: 0 });
      await rt.webhooks.refresh(true);
      return;
    }
    const outcome =
      endpoint === undefined
        ? { ok: false, status: null, body: null, error: "the endpoint was removed" }
        : await sendWebhook(endpoint, delivery, {
            secrets: rt.secrets,
            allowPrivateNetworks: rt.options.webhooks.allowPrivateNetworks,
            allowedPorts: rt.options.webhooks.allowedPorts,
            signal: this.#abort.signal,
          });
    if (endpoint !== undefined && !this.#abort.signal.aborted) {
      if (outcome.ok) this.#breaker.succeeded(endpoint.id);
      else if (this.#breaker.failed(endpoint.id)) {
        rt.logger.warn(
          { endpointId: endpoint.id, coolDownMs: BREAKER_COOL_DOWN_MS },
          "webhook endpoint keeps failing; its deliveries wait for the cool-down",
        );
      }
    }
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
