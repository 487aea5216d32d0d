/** The leases facet: one holder per name until it releases or its TTL runs out; acquiring again renews. */
import type { LeasesFacet } from "@soniq/core/backend";
import type { MemoryStore } from "./internal/store.js";

export function leasesFacet(store: MemoryStore): LeasesFacet {
  return {
    tryAcquire: async (name, holder, ttlMs) => {
      const now = store.now();
      const lease = store.leases.get(name);
      if (lease !== undefined && lease.holder !== holder && lease.expiresAt > now) return false;
      store.leases.set(name, { holder, expiresAt: now + ttlMs });
      return true;
    },
    release: async (name, holder) => {
      if (store.leases.get(name)?.holder === holder) store.leases.delete(name);
    },
  };
}
