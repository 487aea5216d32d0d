/**
 * Group commit for the durable-step writes of concurrent runs (`steps.save`, `steps.wait`): they share one
 * statement or one transaction, and so one commit.
 *
 * A checkpoint commits synchronously (a step that returned is durable), and on PostgreSQL the commit's WAL flush
 * and the round trip cost the server more than the row itself: saved one statement each, a no-op step cost about
 * three times a plain job's database CPU (bench W9), and a sleep's suspension, one transaction each, held the
 * first runs of W9s to one commit per job. Here a write joins a queue; when no write is in flight the queue is
 * written on the next turn of the event loop, and writes that arrive while one is in flight form the next, so
 * groups grow with load and a lone write waits for nothing but that turn. After a group, the next waits one more
 * turn, so the runs it released can queue their next writes first.
 *
 * A group of one is written by `one`; of several, by `many`, which answers each item (a value or an error of its
 * own). No key (a job and a name) appears twice in one group, and once a job's item is left for a later group the
 * job's later items are left too: a job's writes apply in call order. When `many` fails as a whole (nothing of it
 * committed), each item is written again alone, so an error reaches only the write that caused it.
 */
import type { StepRef, StepWrite } from "@soniq/core/backend";
import { jsonParam } from "./step-rows.js";

/** The most items one group writes. */
export const MAX_ITEMS_PER_GROUP = 100;
/** The most text (JSON values and errors, in UTF-16 units) one group carries; a larger item goes alone. */
export const MAX_TEXT_PER_GROUP = 1_000_000;

/** What the grouping needs of an item. */
export interface Groupable {
  /** The job's id. */
  job: string;
  /** The job and the name written: two items with one key never share a group. */
  key: string;
  /** The text the item adds to a group. */
  size: number;
}

/** One item's answer from a group: its value, or the error that belongs to it alone. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<I, R> {
  item: I;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export class GroupCommit<I extends Groupable, R> {
  #queue: Pending<I, R>[] = [];
  #inFlight = 0;
  /** The jobs with an item in a group in flight: their next items wait for it (call order per job). */
  #busy = new Set<string>();
  #scheduled = false;

  constructor(
    /** One item, written alone. */
    private readonly one: (item: I) => Promise<R>,
    /** Several items (distinct keys) in one commit: each one's outcome, in input order. */
    private readonly many: (items: readonly I[]) => Promise<ItemOutcome<R>[]>,
    /**
     * How many groups may be in flight at once, each on a connection of its own. One makes the largest groups
     * (the fewest commits); more suit a write of several round trips, whose group is latency more than commit.
     */
    private readonly maxInFlight = 1,
  ) {}

  write(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#inFlight >= this.maxInFlight || this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(this.#onTurn);
  }

  #onTurn = (): void => {
    this.#scheduled = false;
    if (this.#inFlight >= this.maxInFlight || this.#queue.length === 0) return;
    const group = this.#take();
    // Every queued item belongs to a job with a group in flight: its end schedules the next turn.
    if (group.length === 0) return;
    this.#inFlight++;
    const jobs = group.map((p) => p.item.job);
    for (const job of jobs) this.#busy.add(job);
    void this.#write(group).finally(() => {
      this.#inFlight--;
      for (const job of jobs) this.#busy.delete(job);
      this.#schedule();
    });
    this.#schedule();
  };

  /**
   * The next group: queue order, distinct keys, within both bounds. Once a job's item is left for a later group
   * (or the job has one in flight), the job's later items are left too, so a job's writes apply in call order.
   */
  #take(): Pending<I, R>[] {
    const group: Pending<I, R>[] = [];
    const rest: Pending<I, R>[] = [];
    const keys = new Set<string>();
    const held = new Set<string>(this.#busy);
    let text = 0;
    for (const pending of this.#queue) {
      const { job, key, size } = pending.item;
      const fits =
        group.length === 0 || (group.length < MAX_ITEMS_PER_GROUP && text + size <= MAX_TEXT_PER_GROUP);
      if (fits && !keys.has(key) && !held.has(job)) {
        group.push(pending);
        keys.add(key);
        text += size;
      } else {
        rest.push(pending);
        held.add(job);
      }
    }
    this.#queue = rest;
    return group;
  }

  async #write(group: Pending<I, R>[]): Promise<void> {
    if (group.length > 1) {
      let outcomes: ItemOutcome<R>[] | undefined;
      try {
        outcomes = await this.many(group.map((p) => p.item));
      } catch {
        // Written again one by one below: each item gets its own answer or its own error.
      }
      if (outcomes !== undefined) {
        for (const [i, pending] of group.entries()) {
          const outcome = outcomes[i];
          if (outcome === undefined)
            pending.reject(new Error("a group write answered fewer items than it took"));
          else if (outcome.ok) pending.resolve(outcome.value);
          else pending.reject(outcome.error);
        }
        return;
      }
    }
    await Promise.all(group.map((pending) => this.one(pending.item).then(pending.resolve, pending.reject)));
  }
}

/** A `steps.save` as the group commit carries it. */
export interface StepSave extends Groupable {
  ref: StepRef;
  write: StepWrite;
  /** `write.value` as the JSON text the statement sends (null for SQL NULL). */
  json: string | null;
}

export function stepSave(ref: StepRef, write: StepWrite): StepSave {
  const json = jsonParam(write.value);
  return {
    ref,
    write,
    json,
    job: ref.id,
    key: `${ref.id}\u0000${write.name}`,
    size: (write.error?.length ?? 0) + (json?.length ?? 0),
  };
}
