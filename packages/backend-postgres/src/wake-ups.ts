/**
 * The wakeUps facet: LISTEN on one dedicated connection (internal/listen-client.ts) for new work (enqueues
 * NOTIFY) and finished jobs (settle and cancel NOTIFY).
 */
import type { WakeUpsFacet } from "@soniq/core/backend";
import type { WakeUpChannel } from "./internal/listen-client.js";

export function wakeUpsFacet(channel: WakeUpChannel): WakeUpsFacet {
  return {
    subscribe: (listener) => channel.subscribe(listener),
    subscribeFinished: (listener) => channel.subscribeFinished(listener),
  };
}
