/**
 * The worker's local buffer of claimed-but-not-started jobs: a FIFO with O(1) take (a head index instead
 * of `Array.shift`, which is O(n) and showed up with large claim batches).
 */
import type { Job } from "../common/types.js";

export class JobBuffer {
  #items: Job[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(jobs: readonly Job[]): void {
    if (this.#head > 0 && this.#head >= this.#items.length / 2) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    for (const job of jobs) this.#items.push(job);
  }

  /** The oldest job, or undefined when empty. */
  take(): Job | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const job = this.#items[this.#head];
    this.#items[this.#head] = undefined as unknown as Job; // let it be collected
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    }
    return job;
  }

  /** Removes a job by id (a cancel of a claimed, unstarted job). */
  remove(id: string): boolean {
    const at = this.#items.findIndex((j, i) => i >= this.#head && j.id === id);
    if (at < 0) return false;
    this.#items.splice(at, 1);
    return true;
  }

  /** Empties the buffer and returns what it held, oldest first. */
  drain(): Job[] {
    const out = this.#items.slice(this.#head);
    this.#items = [];
    this.#head = 0;
    return out;
  }
}
