/**
 * One lane per queue holds that queue's queued jobs in two heaps:
 * - `delayed`, keyed by scheduled_at, for jobs that are not due yet;
 * - `ready`, keyed by (priority, scheduled_at, created_at, insertion order), for due jobs.
 * A claim promotes what became due, then pops from `ready`, so it never sorts every queued job.
 *
 * Entries are never removed from the middle of a heap: when a queued job is cancelled, moved or
 * requeued, its old entry goes stale (the job's `queuedVersion` moved on) and is dropped when it
 * reaches the top, or in a compaction once stale entries outnumber live ones.
 */
import { Heap } from "./heap.js";
import type { JobRecord } from "./rows.js";

export interface LaneEntry {
  readonly job: JobRecord;
  readonly version: number;
  readonly priority: number;
  readonly scheduledAt: number;
  readonly createdAt: number;
  readonly seq: number;
}

const readyLess = (a: LaneEntry, b: LaneEntry): boolean =>
  a.priority !== b.priority
    ? a.priority < b.priority
    : a.scheduledAt !== b.scheduledAt
      ? a.scheduledAt < b.scheduledAt
      : a.createdAt !== b.createdAt
        ? a.createdAt < b.createdAt
        : a.seq < b.seq;

const delayedLess = (a: LaneEntry, b: LaneEntry): boolean =>
  a.scheduledAt !== b.scheduledAt ? a.scheduledAt < b.scheduledAt : a.seq < b.seq;

const isLive = (e: LaneEntry): boolean =>
  e.job.live && e.job.status === "queued" && e.job.queuedVersion === e.version;

/** Compact only past this many stale entries, so small queues never pay for it. */
const COMPACT_MIN_STALE = 1024;

export class Lane {
  constructor(readonly queue: string) {}

  private readonly ready = new Heap<LaneEntry>(readyLess);
  private readonly delayed = new Heap<LaneEntry>(delayedLess);
  private stale = 0;

  add(job: JobRecord, now: number): void {
    const entry: LaneEntry = {
      job,
      version: job.queuedVersion,
      priority: job.priority,
      scheduledAt: job.scheduledAt,
      createdAt: job.createdAt,
      seq: job.seq,
    };
    if (entry.scheduledAt <= now) this.ready.push(entry);
    else this.delayed.push(entry);
  }

  /** No entries at all, live or stale: the lane can be dropped. */
  get empty(): boolean {
    return this.ready.size === 0 && this.delayed.size === 0;
  }

  /** A queued job of this lane left `queued` without being popped: its entry is now stale. */
  forget(): void {
    this.stale++;
    if (this.stale >= COMPACT_MIN_STALE && this.stale * 2 > this.ready.size + this.delayed.size) {
      this.ready.retain(isLive);
      this.delayed.retain(isLive);
      this.stale = 0;
    }
  }

  /** The first due job in claim order, or undefined. Drops stale entries on the way. */
  peek(now: number): LaneEntry | undefined {
    this.promote(now);
    for (;;) {
      const top = this.ready.peek();
      if (top === undefined) return undefined;
      if (!isLive(top)) {
        this.ready.pop();
        this.stale = Math.max(0, this.stale - 1);
      } else if (top.scheduledAt > now) {
        // Only reachable when an injected clock went backwards: the job is not due any more.
        this.ready.pop();
        this.delayed.push(top);
      } else {
        return top;
      }
    }
  }

  /** How many due jobs the lane holds, counted up to `upTo` (without popping: the order does not matter). */
  countDue(now: number, upTo: number): number {
    this.promote(now);
    return this.ready.count((e) => isLive(e) && e.scheduledAt <= now, upTo);
  }

  /** Remove the entry `peek` returned. */
  pop(): void {
    this.ready.pop();
  }

  private promote(now: number): void {
    for (;;) {
      const top = this.delayed.peek();
      if (top === undefined) return;
      if (!isLive(top)) {
        this.delayed.pop();
        this.stale = Math.max(0, this.stale - 1);
      } else if (top.scheduledAt <= now) {
        this.delayed.pop();
        this.ready.push(top);
      } else {
        return;
      }
    }
  }
}

export { readyLess };
