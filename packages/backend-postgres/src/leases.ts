/** The leases facet: session-level advisory locks on one dedicated connection (internal/advisory-leases.ts). */
import type { LeasesFacet } from "@soniq/core/backend";
import type { AdvisoryLeases } from "./internal/advisory-leases.js";

export function leasesFacet(leases: AdvisoryLeases): LeasesFacet {
  return {
    tryAcquire: (name, holder, ttlMs, takeOver) => leases.tryAcquire(name, holder, ttlMs, takeOver),
    release: (name, holder) => leases.release(name, holder),
  };
}
