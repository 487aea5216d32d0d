/** In-process wake-ups: listeners hear the queue of every job that became available in this backend. */
import type { WakeUpListener } from "@soniq/core";
import { invalidArgument } from "./errors.js";
import type { MemoryStore } from "./store.js";

export function subscribe(store: MemoryStore, listener: WakeUpListener): () => Promise<void> {
  if (typeof listener !== "function") throw invalidArgument("subscribe expects a listener function.");
  // Wrap so the same function subscribed twice gets two independent subscriptions.
  const entry: WakeUpListener = (queue) => listener(queue);
  store.listeners.add(entry);
  return async () => {
    store.listeners.delete(entry);
  };
}
