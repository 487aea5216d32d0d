/** The `wakeUps` facet: hints that a queue has work (Postgres LISTEN/NOTIFY); polling stays the fallback. */

/** Called with the queue name of a job that became available. A hint: polling stays the fallback. */
export type WakeUpListener = (queue: string) => void;

export interface WakeUpsFacet {
  /** Resolves once listening. The returned function unsubscribes. */
  subscribe(listener: WakeUpListener): Promise<() => Promise<void>>;
}
