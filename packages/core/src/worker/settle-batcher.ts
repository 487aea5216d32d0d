/**
 * Batches every settlement a worker writes into one `runs.settle` call: items added during one turn of the
 * event loop are flushed together on the next (`setImmediate`), or at once when a batch is full. One flush
 * is in flight at a time; items that arrive meanwhile form the next batch, so batches grow with load
 * instead of round trips.
 *
 * A failed write is retried with backoff (`SETTLE_RETRY_DELAYS_MS`, bounded): a dropped connection or a
 * restarting database costs a delay, not a stranded job. Only when every retry failed is the batch
 * reported as failed (`onFailed`), and the writer gives its jobs back.
 */
import type { Settlement } from "../contract/index.js";

/** Delays before each retry of a failed settle call (ms): four retries, about 3.2 s in all. */
export const SETTLE_RETRY_DELAYS_MS: readonly number[] = Object.freeze([100, 300, 900, 1900]);

export class SettleBatcher<T> {
  #items: Settlement[] = [];
  #tags: T[] = [];
  #flushing = false;
  #scheduled = false;

  constructor(
    /** The backend call for one batch: whether each item applied, in input order. */
    private readonly write: (items: Settlement[]) => Promise<boolean[]>,
    private readonly maxBatch: number,
    /** After a batch was written, with each item's tag and whether it applied. */
    private readonly onWritten: (tags: T[], applied: boolean[], items: Settlement[]) => void,
    /** A batch write failed: the rows stay processing until stale recovery requeues them. */
    private readonly onFailed: (tags: T[], err: unknown) => void,
    /** Called after each batch is reported (the next may already be in flight: see `busy`). */
    private readonly onSettled: () => void,
    /** Whether the flush may be unref'd (false while someone awaits the write, e.g. `runOnce`). */
    private readonly unref: () => boolean = () => true,
    private readonly retryDelaysMs: readonly number[] = SETTLE_RETRY_DELAYS_MS,
  ) {}

  /** Settlements not yet confirmed by the backend (queued or being written). */
  get busy(): boolean {
    return this.#flushing || this.#items.length > 0;
  }

  add(item: Settlement, tag: T): void {
    this.#items.push(item);
    this.#tags.push(tag);
    if (this.#items.length >= this.maxBatch) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      const immediate = setImmediate(this.#onImmediate);
      if (this.unref()) immediate.unref();
    }
  }

  #onImmediate = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  /** Starts writing the queued items now (no-op while a write is in flight; it chains the next one). */
  flush(): void {
    if (this.#flushing || this.#items.length === 0) return;
    let items = this.#items;
    let tags = this.#tags;
    if (items.length <= this.maxBatch) {
      this.#items = [];
      this.#tags = [];
    } else {
      items = items.slice(0, this.maxBatch);
      tags = tags.slice(0, this.maxBatch);
      this.#items = this.#items.slice(this.maxBatch);
      this.#tags = this.#tags.slice(this.maxBatch);
    }
    this.#flushing = true;
    this.#attempt(items, tags, 0);
  }

  #attempt(items: Settlement[], tags: T[], retry: number): void {
    let pending: Promise<boolean[]>;
    try {
      pending = this.write(items);
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (applied) => this.#done(() => this.onWritten(tags, applied, items)),
      (err: unknown) => {
        const delay = this.retryDelaysMs[retry];
        if (delay === undefined) {
          this.#done(() => this.onFailed(tags, err));
          return;
        }
        const timer = setTimeout(() => this.#attempt(items, tags, retry + 1), delay);
        if (this.unref()) timer.unref();
      },
    );
  }

  #done(report: () => void): void {
    this.#flushing = false;
    try {
      report();
    } finally {
      if (this.#items.length > 0) this.flush();
      this.onSettled();
    }
  }
}
