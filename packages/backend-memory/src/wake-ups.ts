/**
 * The wakeUps facet: in-process listeners hear the queue of every job that became available here, and the
 * ids of jobs that finished here (one process holds the whole store, so nothing is missed).
 */
import type { FinishedListener, WakeUpListener, WakeUpsFacet } from "@soniq/core/backend";
import type { MemoryStore } from "./internal/store.js";

export function wakeUpsFacet(store: MemoryStore): WakeUpsFacet {
  return {
    subscribe: async (listener) => {
      // Wrapped, so the same function subscribed twice gets two independent subscriptions.
      const entry: WakeUpListener = (queue) => listener(queue);
      store.listeners.add(entry);
      return async () => {
        store.listeners.delete(entry);
      };
    },
    subscribeFinished: async (listener) => {
      const entry: FinishedListener = (ids) => listener(ids);
      store.finishedListeners.add(entry);
      return async () => {
        store.finishedListeners.delete(entry);
      };
    },
  };
}
