/** The wakeUps facet: LISTEN on one dedicated connection (internal/listen-client.ts); enqueues NOTIFY. */
import type { WakeUpsFacet } from "@soniq/core/backend";
import type { WakeUpChannel } from "./internal/listen-client.js";

export function wakeUpsFacet(channel: WakeUpChannel): WakeUpsFacet {
  return { subscribe: (listener) => channel.subscribe(listener) };
}
