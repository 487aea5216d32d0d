/** The wakeUps facet: in-process listeners hear the queue of every job that became available here. */
import type { WakeUpListener, WakeUpsFacet } from "@soniq/core/backend";
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
  };
}
