/** The `wakeUps` facet: hints that a queue has work (Postgres LISTEN/NOTIFY); polling stays the fallback. */

/** Called with the queue name of a job that became available. A hint: polling stays the fallback. */
export type WakeUpListener = (queue: string) => void;

/** Called with the ids of jobs that reached a terminal outcome (done, dead letter, cancelled). A hint. */
export type FinishedListener = (jobIds: readonly string[]) => void;

export interface WakeUpsFacet {
  /** Resolves once listening. The returned function unsubscribes. */
  subscribe(listener: WakeUpListener): Promise<() => Promise<void>>;
  /**
   * Hears the ids of jobs that finished (settled done or dead letter, or cancelled), from every process
   * when `capabilities.notify`, else at least those finished through this backend object. Resolves once
   * listening (on the same connection as `subscribe` where there is one). `waitFor` uses it; polling stays
   * the fallback.
   */
  subscribeFinished(listener: FinishedListener): Promise<() => Promise<void>>;
}
