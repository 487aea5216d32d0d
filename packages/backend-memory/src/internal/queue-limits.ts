/**
 * The claim's queue controls in memory: the storage steps of a claim that covers a limited queue. What to
 * take is decided by core (`claimQueues`, `queueSlots`, `chooseClaim` in `@soniq/core/backend`); this file
 * reads and writes. The claim is one synchronous step, so nothing else runs between the reads and the
 * writes.
 *
 * For each limited queue the claim reads its usage (the rate window's starts pruned first) and its first
 * claimable jobs, each group topped up to its cap in claim order (jobs without a group are not capped); for
 * the open queues their first due jobs (a k-way merge over their lanes). Every entry it looked at is put
 * back; core chooses; the chosen jobs are marked processing and the starts of rate-limited queues recorded.
 */
import type { ClaimCap, ClaimRequest, Job, LimitedQueueRead, QueueControls } from "@soniq/core/backend";
import { chooseClaim, isLimited, limitedBudget, queueSlots } from "@soniq/core/backend";
import { type Lane, type LaneEntry, readyLess } from "./lanes.js";
import { type JobRecord, toJob } from "./rows.js";
import type { MemoryStore } from "./store.js";

/** Queues that are paused or limited, by name (usually none). */
export function controlledQueues(store: MemoryStore): Map<string, QueueControls> {
  const out = new Map<string, QueueControls>();
  for (const [name, s] of store.queueSettings) if (s.paused || isLimited(s)) out.set(name, s);
  return out;
}

interface Candidate {
  id: string;
  priority: number;
  scheduledAt: number;
  createdAt: number;
  job: JobRecord;
}

const candidate = (e: LaneEntry): Candidate => ({
  id: e.job.id,
  priority: e.priority,
  scheduledAt: e.scheduledAt,
  createdAt: e.createdAt,
  job: e.job,
});

/** Start times in the rate window, oldest first, pruned past it. */
function startsOf(store: MemoryStore, queue: string, perMs: number, now: number): number[] {
  const starts = store.queueStarts.get(queue) ?? [];
  while (starts.length > 0 && (starts[0] as number) <= now - perMs) starts.shift();
  store.queueStarts.set(queue, starts);
  return starts;
}

function readLimited(
  store: MemoryStore,
  queue: string,
  limits: QueueControls,
  request: ClaimRequest,
  now: number,
): LimitedQueueRead<Candidate> {
  const rate = limits.rateLimit;
  const starts = rate === null ? [] : startsOf(store, queue, rate.perMs, now);
  const processing = store.counts.get(queue)?.processing ?? 0;
  const usage = {
    processing,
    startsInWindow: starts.length,
    windowOpensInMs:
      rate === null || starts.length === 0 ? null : Math.max(1, (starts[0] as number) + rate.perMs - now),
    due: 0,
  };
  const ask = Math.min(limitedBudget(request), queueSlots(limits, { ...usage, due: 0 }));
  const lane = store.lanes.get(queue);
  const candidates: Candidate[] = [];
  const seen: LaneEntry[] = [];
  const inGroup = new Map<string, number>();
  // Due jobs are counted until one past the candidates: enough for core to see whether any was left.
  while (lane !== undefined && candidates.length < ask) {
    const top = lane.peek(now);
    if (top === undefined) break;
    lane.pop();
    seen.push(top);
    const group = top.job.group;
    if (limits.groupConcurrency !== null && group !== null) {
      const held = store.groupProcessing(queue, group) + (inGroup.get(group) ?? 0);
      if (held >= limits.groupConcurrency) continue;
      inGroup.set(group, (inGroup.get(group) ?? 0) + 1);
    }
    candidates.push(candidate(top));
  }
  usage.due = seen.length + (lane?.peek(now) === undefined ? 0 : 1);
  for (const entry of seen) lane?.add(entry.job, now);
  return { queue, limits, usage, candidates };
}

/** The first `limit` due jobs across the open lanes, in claim order; their entries are put back. */
function readOpen(lanes: readonly Lane[], limit: number, now: number): Candidate[] {
  const out: Candidate[] = [];
  const seen: [Lane, LaneEntry][] = [];
  while (out.length < limit) {
    let best: [Lane, LaneEntry] | undefined;
    for (const lane of lanes) {
      const top = lane.peek(now);
      if (top !== undefined && (best === undefined || readyLess(top, best[1]))) best = [lane, top];
    }
    if (best === undefined) break;
    best[0].pop();
    seen.push(best);
    out.push(candidate(best[1]));
  }
  for (const [lane, entry] of seen) lane.add(entry.job, now);
  return out;
}

/** A claim covering `limited` queues and the `open` lanes: the jobs in claim order and the `capped` answer. */
export function claimWithLimits(
  store: MemoryStore,
  request: ClaimRequest,
  controls: ReadonlyMap<string, QueueControls>,
  open: readonly Lane[],
  limited: readonly string[],
  now: number,
): { jobs: Job[]; capped: ClaimCap | null } {
  const reads = limited.map((q) => readLimited(store, q, controls.get(q) as QueueControls, request, now));
  const choice = chooseClaim(request, readOpen(open, request.limit, now), reads);
  for (const c of choice.chosen) {
    store.transition(c.job, "processing", { attempts: c.job.attempts + 1, workerId: request.workerId }, now);
  }
  for (const read of reads) {
    if (read.limits.rateLimit === null) continue;
    const taken = choice.fromLimited.get(read.queue) ?? [];
    if (taken.length > 0) store.queueStarts.get(read.queue)?.push(...taken.map(() => now));
  }
  return { jobs: choice.chosen.map((c) => toJob(c.job)), capped: choice.capped };
}
