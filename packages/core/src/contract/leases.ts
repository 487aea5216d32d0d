/** The `leases` facet: named, expiring leases (maintenance and the scheduler's leader). */

export interface LeasesFacet {
  /** Acquire or renew the named lease for `holder` for `ttlMs`. True when `holder` holds it now. */
  tryAcquire(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Release it if `holder` holds it. */
  release(name: string, holder: string): Promise<void>;
}
