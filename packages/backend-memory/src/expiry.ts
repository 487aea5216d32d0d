/** deleteExpiredJobs: drop done rows whose result TTL passed, in expiry order from the expiry index. */
import type { MemoryStore } from "./store.js";

export function deleteExpiredJobs(store: MemoryStore): number {
  let deleted = 0;
  for (const job of store.takeExpired(store.now())) {
    store.removeJob(job);
    deleted++;
  }
  return deleted;
}
