/**
 * A circuit breaker per endpoint, kept by each deliverer in memory: after `threshold` consecutive failed
 * attempts an endpoint rests for `coolDownMs` (its deliveries stay pending and are not claimed, so no attempt
 * is spent on a receiver that is down). When the rest ends one claim goes through (half open): a failure
 * rests it again at once, a success forgets its failures.
 */

export interface BreakerOptions {
  threshold: number;
  coolDownMs: number;
  /** A monotonic clock (ms); tests pass their own. */
  now?: () => number;
}

export class EndpointBreaker {
  readonly #failures = new Map<string, number>();
  readonly #restingUntil = new Map<string, number>();
  readonly #threshold: number;
  readonly #coolDownMs: number;
  readonly #now: () => number;

  constructor(options: BreakerOptions) {
    this.#threshold = options.threshold;
    this.#coolDownMs = options.coolDownMs;
    this.#now = options.now ?? (() => performance.now());
  }

  /** An attempt of the endpoint failed; returns true when that (re)opened its breaker. */
  failed(endpointId: string): boolean {
    const count = (this.#failures.get(endpointId) ?? 0) + 1;
    this.#failures.set(endpointId, count);
    if (count < this.#threshold) return false;
    this.#restingUntil.set(endpointId, this.#now() + this.#coolDownMs);
    return true;
  }

  /** An attempt of the endpoint succeeded: its failures are forgotten. */
  succeeded(endpointId: string): void {
    this.#failures.delete(endpointId);
    this.#restingUntil.delete(endpointId);
  }

  /** The endpoints resting now (their deliveries are left out of claims). */
  resting(): string[] {
    const now = this.#now();
    const out: string[] = [];
    for (const [id, until] of this.#restingUntil) {
      if (until > now) out.push(id);
    }
    return out;
  }
}
