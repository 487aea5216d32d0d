/**
 * The leases facet: one holder per name until it releases or its TTL runs out; acquiring again renews. With
 * `takeOver`, a lease held by a stopped worker or one stale by the taker's threshold is free.
 */
import type { LeasesFacet, LeaseTakeOver } from "@soniq/core/backend";
import type { MemoryStore } from "./internal/store.js";

export function leasesFacet(store: MemoryStore): LeasesFacet {
  return {
    tryAcquire: async (name, holder, ttlMs, takeOver) => {
      const now = store.now();
      const lease = store.leases.get(name);
      if (
        lease !== undefined &&
        lease.holder !== holder &&
        lease.expiresAt > now &&
        !holderIsGone(store, lease.holder, takeOver)
      ) {
        return false;
      }
      store.leases.set(name, { holder, expiresAt: now + ttlMs });
      return true;
    },
    release: async (name, holder) => {
      if (store.leases.get(name)?.holder === holder) store.leases.delete(name);
    },
  };
}

function holderIsGone(store: MemoryStore, holder: string, takeOver: LeaseTakeOver | undefined): boolean {
  const worker = takeOver === undefined ? undefined : store.workers.get(holder);
  if (worker === undefined || takeOver === undefined) return false;
  return worker.status === "stopped" || worker.lastHeartbeat < store.now() - takeOver.staleAfterMs;
}
