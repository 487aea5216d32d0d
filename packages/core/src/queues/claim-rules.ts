/**
 * The claim's orchestration across limited and unlimited queues, written once for every backend.
 *
 * A claim covers some queues (or all). Paused ones are left out. A queue with a concurrency, group
 * concurrency or rate limit is *limited*: it may give only what its limits allow now (its slots), and the
 * claim takes at most `limitedMax` jobs from limited queues in all. The rest are *open* queues.
 *
 * One ordering on every backend: among every job the claim may take (every due job of an open queue, the
 * first `slots` claimable jobs of each limited queue), it takes the first `limit` in priority, scheduled_at,
 * created_at order, skipping a limited queue's job once the `limitedMax` budget is spent. A claim shorter
 * than `limit` is `capped` when a limited queue it covers still has due jobs it did not take.
 *
 * A backend stores and fetches; core decides. A backend splits the requested queues with `claimQueues` (its
 * stored controls in, open and limited out); with no limited queue covered it claims the open ones in one
 * statement, else it runs the limited claim (`limited-claim.ts`) over its store, which applies the rest of
 * these rules: the `limitedBudget`, each limited queue's `queueSlots`, and `chooseClaim`.
 */

import type { RateLimit } from "../common/types.js";
import type { ClaimCap } from "../contract/index.js";

/** A queue's controls, as a backend stores them (`soniq_queues`). */
export interface QueueControls {
  paused: boolean;
  concurrency: number | null;
  groupConcurrency: number | null;
  rateLimit: RateLimit | null;
}

/** Whether these controls limit the queue (a concurrency, group concurrency or rate limit). */
export function isLimited(c: Omit<QueueControls, "paused">): boolean {
  return c.concurrency !== null || c.groupConcurrency !== null || c.rateLimit !== null;
}

/** The requested queues, split by how the claim takes from them. */
export interface ClaimQueues {
  /**
   * Queues claimed without a limit. `null`: every queue without a stored control (the request covered every
   * queue); a backend leaves out every paused or limited queue it knows of.
   */
  open: readonly string[] | null;
  /** Limited, unpaused queues the claim covers, by name (the order limited queues are locked in). */
  limited: readonly string[];
}

/** Splits `requested` (null: every queue) by the stored controls of the queues that have any. */
export function claimQueues(
  requested: readonly string[] | null,
  controls: ReadonlyMap<string, QueueControls>,
): ClaimQueues {
  const limitedOf = (names: Iterable<string>) =>
    [...names].filter((q) => {
      const c = controls.get(q);
      return c !== undefined && !c.paused && isLimited(c);
    });
  if (requested === null) return { open: null, limited: limitedOf(controls.keys()).sort() };
  const unique = [...new Set(requested)];
  const open = unique.filter((q) => controls.get(q) === undefined || !controls.get(q)?.paused);
  const limited = limitedOf(open).sort();
  return { open: open.filter((q) => !limited.includes(q)), limited };
}

/** What the claim asks of limited queues: `limitedMax` (omitted: `limit`) within `limit`. */
export function limitedBudget(request: { limit: number; limitedMax?: number }): number {
  return Math.max(0, Math.min(request.limitedMax ?? request.limit, request.limit));
}

/** What a limited queue holds when the claim reads it (under its lock where the backend has one). */
export interface QueueUsage {
  /** Jobs processing in the queue (claimed ones included). Read when the queue has a concurrency. */
  processing: number;
  /** Starts in the rate window (`now - perMs`, now]. Read when the queue has a rate limit. */
  startsInWindow: number;
  /** When the window's oldest start leaves it, in ms from now (at least 1); null when it holds none. */
  windowOpensInMs: number | null;
  /**
   * Due queued jobs in the queue. A store may stop counting past `limitedBudget(request) + 1` (the `dueUpTo`
   * the limited claim asks for): the claim takes at most the budget from the queue, and only "more than it
   * took" matters.
   */
  due: number;
}

/** How many jobs the queue may start now under its concurrency and rate window (group caps apply per job). */
export function queueSlots(limits: Omit<QueueControls, "paused">, usage: QueueUsage): number {
  let slots = Number.POSITIVE_INFINITY;
  if (limits.concurrency !== null) slots = limits.concurrency - usage.processing;
  if (limits.rateLimit !== null) slots = Math.min(slots, limits.rateLimit.max - usage.startsInWindow);
  return Math.max(0, slots);
}

/** One job a claim may take, with its claim-order key (times in ms since the epoch). */
export interface ClaimCandidate {
  id: string;
  priority: number;
  scheduledAt: number;
  createdAt: number;
}

/** A limited queue as the claim read it: its limits, usage and first claimable jobs in claim order. */
export interface LimitedQueueRead<C extends ClaimCandidate = ClaimCandidate> {
  queue: string;
  limits: Omit<QueueControls, "paused">;
  usage: QueueUsage;
  /** Up to `limitedBudget(request)` claimable jobs (groups topped up to their cap), in claim order. */
  candidates: readonly C[];
}

/** What to take: the chosen jobs in claim order, per limited queue how many, and the `capped` answer. */
export interface ClaimChoice<C extends ClaimCandidate = ClaimCandidate> {
  chosen: C[];
  /** Jobs taken from each limited queue (a rate-limited queue records that many starts). */
  fromLimited: Map<string, C[]>;
  capped: ClaimCap | null;
}

function before(a: ClaimCandidate, b: ClaimCandidate): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.scheduledAt !== b.scheduledAt) return a.scheduledAt < b.scheduledAt;
  return a.createdAt < b.createdAt;
}

interface Stream<C extends ClaimCandidate> {
  items: readonly C[];
  next: number;
  /** Null for the open queues. */
  limited: LimitedQueueRead<C> | null;
  slots: number;
}

/**
 * Merges the open candidates and each limited queue's first `slots` candidates in claim order and takes the
 * first `limit`, a limited queue's job only while the `limitedMax` budget lasts. On equal keys the open
 * queues come first, then limited queues by name.
 */
export function chooseClaim<C extends ClaimCandidate>(
  request: { limit: number; limitedMax?: number },
  open: readonly C[],
  limited: readonly LimitedQueueRead<C>[],
): ClaimChoice<C> {
  let budget = limitedBudget(request);
  const streams: Stream<C>[] = [{ items: open, next: 0, limited: null, slots: Number.POSITIVE_INFINITY }];
  for (const read of [...limited].sort((a, b) => (a.queue < b.queue ? -1 : 1))) {
    streams.push({
      items: read.candidates,
      next: 0,
      limited: read,
      slots: queueSlots(read.limits, read.usage),
    });
  }
  const chosen: C[] = [];
  const fromLimited = new Map<string, C[]>(limited.map((read) => [read.queue, []]));
  while (chosen.length < request.limit) {
    let best: Stream<C> | undefined;
    for (const s of streams) {
      const open = s.next < s.items.length && (s.limited === null || (budget > 0 && s.slots > 0));
      if (open && (best === undefined || before(s.items[s.next] as C, best.items[best.next] as C))) best = s;
    }
    if (best === undefined) break;
    const job = best.items[best.next++] as C;
    chosen.push(job);
    if (best.limited !== null) {
      budget--;
      best.slots--;
      fromLimited.get(best.limited.queue)?.push(job);
    }
  }
  const capped = chosen.length < request.limit ? capOf(limited, fromLimited) : null;
  return { chosen, fromLimited, capped };
}

/**
 * After a short claim: capped when a limited queue still has due jobs it did not give; `retryInMs` when a
 * full rate window held one back (the soonest such window's opening).
 */
function capOf<C extends ClaimCandidate>(
  limited: readonly LimitedQueueRead<C>[],
  fromLimited: ReadonlyMap<string, C[]>,
): ClaimCap | null {
  let capped = false;
  let retryInMs: number | null = null;
  for (const read of limited) {
    const taken = fromLimited.get(read.queue)?.length ?? 0;
    if (read.usage.due <= taken) continue;
    capped = true;
    const rate = read.limits.rateLimit;
    if (rate !== null && read.usage.startsInWindow + taken >= rate.max) {
      // A window that held no start before this claim opens `perMs` after this claim's first start.
      const opens = read.usage.startsInWindow > 0 ? (read.usage.windowOpensInMs ?? rate.perMs) : rate.perMs;
      retryInMs = Math.min(retryInMs ?? opens, Math.max(1, opens));
    }
  }
  return capped ? { retryInMs } : null;
}
