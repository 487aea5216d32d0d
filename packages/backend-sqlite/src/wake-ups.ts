/**
 * The wakeUps facet: in-process subscribers only (see internal/notifier.ts), for new work and for finished
 * jobs; other processes poll.
 */
import type { WakeUpsFacet } from "@soniq/core/backend";
import { runSync } from "./internal/context.js";
import type { Notifier } from "./internal/notifier.js";

export function wakeUpsFacet(notifier: Notifier): WakeUpsFacet {
  return {
    subscribe: (listener) => runSync("wakeUps.subscribe", () => notifier.subscribe(listener)),
    subscribeFinished: (listener) =>
      runSync("wakeUps.subscribeFinished", () => notifier.subscribeFinished(listener)),
  };
}
