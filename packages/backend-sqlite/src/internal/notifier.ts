/**
 * In-process wake-ups: subscribers of one backend object hear about jobs that object made available.
 * Delivery waits for the current synchronous work (a caller's transaction included) via a microtask.
 * Other processes are not reached (capability `notify: false`): core polls with jitter for them.
 */
import type { FinishedListener, WakeUpListener } from "@soniq/core/backend";

export class Notifier {
  readonly #listeners = new Set<WakeUpListener>();
  readonly #finished = new Set<FinishedListener>();

  subscribe(listener: WakeUpListener): () => Promise<void> {
    // A wrapper per subscription, so subscribing the same function twice needs two unsubscribes.
    const entry: WakeUpListener = (queue) => listener(queue);
    this.#listeners.add(entry);
    return async () => {
      this.#listeners.delete(entry);
    };
  }

  notify(queue: string): void {
    if (this.#listeners.size === 0) return;
    queueMicrotask(() => {
      for (const listener of this.#listeners) {
        try {
          listener(queue);
        } catch {
          // A listener's failure must not break the write that woke it; polling stays the fallback.
        }
      }
    });
  }

  subscribeFinished(listener: FinishedListener): () => Promise<void> {
    const entry: FinishedListener = (ids) => listener(ids);
    this.#finished.add(entry);
    return async () => {
      this.#finished.delete(entry);
    };
  }

  /** Finished job ids (done, dead letter, cancelled) for in-process `subscribeFinished` listeners. */
  finished(ids: readonly string[]): void {
    if (this.#finished.size === 0 || ids.length === 0) return;
    queueMicrotask(() => {
      for (const listener of this.#finished) {
        try {
          listener(ids);
        } catch {
          // A hint; polling stays the fallback.
        }
      }
    });
  }

  clear(): void {
    this.#listeners.clear();
    this.#finished.clear();
  }
}
