/** Named leases for leader election: one holder at a time until it releases or its TTL runs out. */
import { invalidArgument, requireString } from "./errors.js";
import type { MemoryStore } from "./store.js";

export function tryAcquireLease(store: MemoryStore, name: string, holder: string, ttlMs: number): boolean {
  requireString(name, "name");
  requireString(holder, "holder");
  if (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw invalidArgument(`ttlMs must be a finite number > 0, got ${String(ttlMs)}.`, { ttlMs });
  }
  const now = store.now();
  const lease = store.leases.get(name);
  if (lease !== undefined && lease.holder !== holder && lease.expiresAt > now) return false;
  store.leases.set(name, { holder, expiresAt: now + ttlMs });
  return true;
}

export function releaseLease(store: MemoryStore, name: string, holder: string): void {
  if (store.leases.get(name)?.holder === holder) store.leases.delete(name);
}
