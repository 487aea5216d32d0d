/**
 * The runs facet: claim and settle.
 *
 * claim takes due queued jobs in (priority, scheduled_at, created_at) order across the requested queues'
 * lanes and marks them processing with attempts + 1 and the worker id. It returns every job it took,
 * including one past its max_attempts (core dead-letters those). A limited queue gives at most its budget
 * (and the request's `limitedMax` across limited queues); a short claim that left a limited queue's due
 * jobs behind says so (`capped`).
 *
 * settle writes a batch of outcomes in one synchronous step, so nothing else runs in between. It plans
 * every item first (fence, dead-letter conflict, JSON encoding) without changing anything, consults the
 * fault hook before the moves, then applies the plan: a throw at any point before the apply leaves the
 * store as it was, as a rolled-back transaction would.
 */
import type {
  ClaimCap,
  ClaimRequest,
  ClaimResult,
  DeadLetterSettlement,
  DoneSettlement,
  Job,
  RateLimit,
  RequeueSettlement,
  RunsFacet,
  Settlement,
} from "@soniq/core/backend";
import { deadLetterMoveInterrupted } from "./internal/errors.js";
import { type Lane, type LaneEntry, readyLess } from "./internal/lanes.js";
import { deadLetterRow, encodeJson, type JobRecord, toJob } from "./internal/rows.js";
import type { MemoryStore } from "./internal/store.js";

export function runsFacet(store: MemoryStore): RunsFacet {
  return {
    claim: async (request) => claim(store, request),
    settle: async (items) => settle(store, items),
  };
}

/**
 * A limited queue's claim budget: slots left under `concurrency` and under the rate limit's window, and
 * the group cap. Unlimited queues have no budget.
 */
interface Budget {
  slots: number;
  groupCap: number | null;
  /** Start times in the rate window, oldest first (null without a rate limit). */
  starts: number[] | null;
  rate: RateLimit | null;
}

function budgetOf(store: MemoryStore, queue: string, now: number): Budget | null {
  const s = store.queueSettings.get(queue);
  if (s === undefined || (s.concurrency === null && s.groupConcurrency === null && s.rateLimit === null)) {
    return null;
  }
  let slots = Number.POSITIVE_INFINITY;
  if (s.concurrency !== null) slots = s.concurrency - (store.counts.get(queue)?.processing ?? 0);
  let starts: number[] | null = null;
  if (s.rateLimit !== null) {
    starts = store.queueStarts.get(queue) ?? [];
    const from = now - s.rateLimit.perMs;
    while (starts.length > 0 && (starts[0] as number) <= from) starts.shift();
    store.queueStarts.set(queue, starts);
    slots = Math.min(slots, s.rateLimit.max - starts.length);
  }
  return { slots, groupCap: s.groupConcurrency, starts, rate: s.rateLimit };
}

function claim(store: MemoryStore, request: ClaimRequest): ClaimResult {
  const now = store.now();
  const lanes = selectLanes(store, request.queues);
  if (lanes.length === 0) return { jobs: [], capped: null };
  const budgets = new Map<Lane, Budget>();
  for (const lane of lanes) {
    const budget = budgetOf(store, lane.queue, now);
    if (budget !== null) budgets.set(lane, budget);
  }
  let limitedLeft = Math.min(request.limitedMax ?? request.limit, request.limit);
  const isOpen = (lane: Lane) => {
    const budget = budgets.get(lane);
    return budget === undefined || (budget.slots > 0 && limitedLeft > 0);
  };
  let open = lanes.filter(isOpen);
  const claimed: Job[] = [];
  // Jobs of a full group are taken off the heap while this claim looks past them, then put back.
  const skipped: [Lane, JobRecord][] = [];
  while (claimed.length < request.limit) {
    const next = nextLane(open, now);
    if (next === undefined) break;
    next.lane.pop();
    const job = next.top.job;
    const budget = budgets.get(next.lane);
    if (budget !== undefined && budget.groupCap !== null && job.group !== null) {
      if (store.groupProcessing(job.queue, job.group) >= budget.groupCap) {
        skipped.push([next.lane, job]);
        continue;
      }
    }
    store.transition(
      job,
      "processing",
      { attempts: job.attempts + 1, workerId: request.workerId },
      now,
      true,
    );
    claimed.push(toJob(job));
    if (budget !== undefined) {
      budget.starts?.push(now);
      budget.slots--;
      limitedLeft--;
      if (budget.slots <= 0 || limitedLeft <= 0) open = open.filter(isOpen);
    }
  }
  for (const [lane, job] of skipped) lane.add(job, now);
  return { jobs: claimed, capped: claimed.length < request.limit ? capOf(budgets, now) : null };
}

/**
 * After a short claim: a limited lane that still has a due job was held back by a limit (the loop takes
 * every due job of an open lane), and a full rate window says when it opens again.
 */
function capOf(budgets: ReadonlyMap<Lane, Budget>, now: number): ClaimCap | null {
  let capped = false;
  let retryInMs: number | null = null;
  for (const [lane, budget] of budgets) {
    if (lane.peek(now) === undefined) continue;
    capped = true;
    const { starts, rate } = budget;
    if (starts !== null && rate !== null && starts.length >= rate.max) {
      const opensIn = Math.max(1, (starts[0] ?? now) + rate.perMs - now);
      retryInMs = retryInMs === null ? opensIn : Math.min(retryInMs, opensIn);
    }
  }
  return capped ? { retryInMs } : null;
}

function selectLanes(store: MemoryStore, queues: readonly string[] | null): Lane[] {
  const lanes: Lane[] = [];
  if (queues === null) {
    // Drop drained lanes so claiming from every queue stays cheap when queue names come and go.
    for (const [queue, lane] of store.lanes) {
      if (lane.empty) store.lanes.delete(queue);
      else if (store.queueSettings.get(queue)?.paused !== true) lanes.push(lane);
    }
    return lanes;
  }
  for (const queue of new Set(queues)) {
    const lane = store.lanes.get(queue);
    if (lane !== undefined && store.queueSettings.get(queue)?.paused !== true) lanes.push(lane);
  }
  return lanes;
}

/** The lane whose first due job comes first in claim order (a k-way merge over the queues). */
function nextLane(lanes: readonly Lane[], now: number): { lane: Lane; top: LaneEntry } | undefined {
  let best: { lane: Lane; top: LaneEntry } | undefined;
  for (const lane of lanes) {
    const top = lane.peek(now);
    if (top !== undefined && (best === undefined || readyLess(top, best.top))) best = { lane, top };
  }
  return best;
}

type Step =
  | { kind: "done"; job: JobRecord; item: DoneSettlement; resultJson: string | null }
  | { kind: "requeue"; job: JobRecord; item: RequeueSettlement }
  | { kind: "dead_letter"; job: JobRecord; item: DeadLetterSettlement; tagsJson: string | null };

function settle(store: MemoryStore, items: readonly Settlement[]): boolean[] {
  const taken = new Set<string>();
  const steps: Step[] = [];
  const applied = items.map((item) => {
    const step = plan(store, item, taken);
    if (step === null) return false;
    taken.add(item.id);
    steps.push(step);
    return true;
  });
  const interrupt = store.hooks.interruptDeadLetterMove;
  for (const step of interrupt === undefined ? [] : steps) {
    if (step.kind === "dead_letter" && interrupt?.(step.job.id) === true) {
      // Fail between the two steps of the move, then undo the insert: nothing of this call applies.
      const row = deadLetterRow(store, step.job, step.item, step.tagsJson, store.now());
      store.addDeadLetter(row);
      store.removeDeadLetter(row);
      throw deadLetterMoveInterrupted(step.job.id);
    }
  }
  const now = store.now();
  const woken = new Set<string>();
  for (const step of steps) apply(store, step, now, woken);
  for (const queue of woken) store.wake(queue);
  return applied;
}

/**
 * What an item would do, or null when it does not apply: the row is not processing under the item's
 * attempt (late write), an earlier item of this call took it, or (dead_letter) the id already has a
 * dead-letter row.
 */
function plan(store: MemoryStore, item: Settlement, taken: ReadonlySet<string>): Step | null {
  const job = store.jobs.get(item.id);
  if (job === undefined || job.status !== "processing" || job.attempts !== item.attempt) return null;
  if (taken.has(item.id)) return null;
  switch (item.kind) {
    case "done": {
      const resultJson = item.result === undefined ? null : encodeJson(item.result, "result");
      return { kind: "done", job, item, resultJson };
    }
    case "requeue":
      return { kind: "requeue", job, item };
    case "dead_letter": {
      if (store.deadLetters.has(item.id)) return null;
      const tagsJson = item.tags === null ? null : encodeJson(item.tags, "tags");
      return { kind: "dead_letter", job, item, tagsJson };
    }
  }
}

function apply(store: MemoryStore, step: Step, now: number, woken: Set<string>): void {
  const { job } = step;
  switch (step.kind) {
    case "done":
      if (step.item.resultTtlMs === 0) store.removeJob(job);
      else {
        const patch = { resultJson: step.resultJson, expiresAt: now + step.item.resultTtlMs };
        store.transition(job, "done", patch, now);
      }
      return;
    case "requeue": {
      const { attempts, delayMs, lastError } = step.item;
      const patch = { attempts, workerId: null, scheduledAt: now + delayMs };
      store.transition(job, "queued", lastError === null ? patch : { ...patch, lastError }, now);
      if (delayMs === 0) woken.add(job.queue);
      return;
    }
    case "dead_letter":
      store.addDeadLetter(deadLetterRow(store, job, step.item, step.tagsJson, now));
      store.removeJob(job);
      return;
  }
}
