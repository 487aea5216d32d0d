/** complete: processing -> done with the result and its expiry, or deleted when the TTL is 0. */
import type { CompleteItem } from "@soniq/core";
import { requireNonNegative } from "./errors.js";
import { claimedJob } from "./fence.js";
import { encodeJson } from "./rows.js";
import type { MemoryStore } from "./store.js";

export function complete(store: MemoryStore, items: readonly CompleteItem[]): number {
  // Validate and encode everything first so a bad item changes nothing.
  const encoded = items.map((item, index) => ({
    item,
    ttl: requireNonNegative(item.resultTtlMs, `items[${index}].resultTtlMs`),
    resultJson: item.result === undefined ? null : encodeJson(item.result, `items[${index}].result`),
  }));
  const now = store.now();
  let applied = 0;
  for (const { item, ttl, resultJson } of encoded) {
    const job = claimedJob(store, item);
    if (job === null) continue;
    if (ttl === 0) store.removeJob(job);
    else store.transition(job, "done", { resultJson, expiresAt: now + ttl }, now);
    applied++;
  }
  return applied;
}
