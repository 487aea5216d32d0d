/** The `leases` facet: named, expiring leases (maintenance and the scheduler's leader). */

/**
 * How a would-be holder judges the current holder's liveness (DESIGN 7: a lease held by a stale or stopped
 * worker is taken over). Worker leases pass it: the holder is a worker id.
 */
export interface LeaseTakeOver {
  /**
   * The taker's stale threshold: the lease is free when its holder is a registered worker that is `stopped`
   * or whose last heartbeat is older than this (storage clock), whatever TTL the holder set.
   */
  staleAfterMs: number;
}

export interface LeasesFacet {
  /**
   * Acquire or renew the named lease for `holder` for `ttlMs`. True when `holder` holds it now. With
   * `takeOver`, a lease whose holder is a stopped or stale worker (see `LeaseTakeOver`) is taken from it.
   */
  tryAcquire(name: string, holder: string, ttlMs: number, takeOver?: LeaseTakeOver): Promise<boolean>;
  /** Release it if `holder` holds it. */
  release(name: string, holder: string): Promise<void>;
}
