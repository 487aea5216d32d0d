/**
 * The login form's rate limit: failed logins are counted in a sliding minute; past the limit every
 * login (right key or not) answers 429 with `Retry-After` until the oldest failure leaves the window.
 * Keys are at least 16 characters, so this bounds the work and the log noise of a guessing client
 * rather than the odds of a guess. Bearer requests are not affected. Instance-scoped.
 */
import { DashboardError } from "../errors.js";

export const LOGIN_FAILURES_PER_MINUTE = 10;
const WINDOW_MS = 60_000;

export class LoginLimit {
  readonly #failures: number[] = [];

  constructor(
    private readonly max = LOGIN_FAILURES_PER_MINUTE,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws 429 while the window is full. */
  check(): void {
    const now = this.now();
    while (this.#failures.length > 0 && (this.#failures[0] as number) <= now - WINDOW_MS)
      this.#failures.shift();
    if (this.#failures.length >= this.max) {
      const retryAfterS = Math.max(1, Math.ceil(((this.#failures[0] as number) + WINDOW_MS - now) / 1000));
      throw new DashboardError(
        "rate_limited",
        `Too many failed logins; try again in ${retryAfterS} s (API clients can send the key as a Bearer header).`,
        { retryAfterS },
      );
    }
  }

  failed(): void {
    this.#failures.push(this.now());
    if (this.#failures.length > this.max) this.#failures.shift();
  }
}
