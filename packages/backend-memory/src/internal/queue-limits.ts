/**
 * The claim's queue controls in memory: the storage of a claim that covers a limited queue. Core's limited
 * claim (`runLimitedClaimSync` in `@soniq/core/backend`) decides what to take; this file's store reads and
 * writes. The claim is one synchronous step, so nothing else runs between the reads and the writes, and the
 * store locks nothing.
 *
 * For each limited queue the store reads its usage (the rate window's starts pruned first; its due jobs counted
 * in the lane's ready heap without popping, `Lane.countDue`, so a claim with no free slot walks nothing) and its first
 * claimable jobs, each group topped up to its cap in claim order (jobs without a group are not capped); for
 * the open queues their first due jobs (a k-way merge over their lanes). Every entry it looked at is put
 * back; it marks the chosen jobs processing and records the starts of rate-limited queues.
 */
import type {
  ClaimCandidate,
  ClaimCap,
  ClaimRequest,
  Job,
  LimitedClaimStore,
  QueueControls,
} from "@soniq/core/backend";
import { isLimited, runLimitedClaimSync } from "@soniq/core/backend";
import { type Lane, type LaneEntry, readyLess } from "./lanes.js";
import { type JobRecord, toJob } from "./rows.js";
import type { MemoryStore } from "./store.js";

/** Queues that are paused or limited, by name (usually none). */
export function controlledQueues(store: MemoryStore): Map<string, QueueControls> {
  const out = new Map<string, QueueControls>();
  for (const [name, s] of store.queueSettings) if (s.paused || isLimited(s)) out.set(name, s);
  return out;
}

interface Candidate extends ClaimCandidate {
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

/** Hands the lane's due entries to `visit` in claim order while `more()` holds, then puts them all back. */
function scan(lane: Lane | undefined, now: number, more: () => boolean, visit: (e: LaneEntry) => void): void {
  const seen: LaneEntry[] = [];
  while (lane !== undefined && more()) {
    const top = lane.peek(now);
    if (top === undefined) break;
    lane.pop();
    seen.push(top);
    visit(top);
  }
  for (const entry of seen) lane?.add(entry.job, now);
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

/** The limited claim's store over the claim's synchronous step. */
function claimStore(
  store: MemoryStore,
  workerId: string | null,
  stored: ReadonlyMap<string, QueueControls>,
  open: readonly Lane[],
  now: number,
): LimitedClaimStore<Candidate, Job> {
  return {
    // Nothing else runs during the claim's step.
    lockQueues: () => stored,
    usage(queue, controls, dueUpTo) {
      const rate = controls.rateLimit;
      const starts = rate === null ? [] : startsOf(store, queue, rate.perMs, now);
      return {
        processing: store.counts.get(queue)?.processing ?? 0,
        startsInWindow: starts.length,
        windowOpensInMs:
          rate === null || starts.length === 0 ? null : Math.max(1, (starts[0] as number) + rate.perMs - now),
        due: store.lanes.get(queue)?.countDue(now, dueUpTo) ?? 0,
      };
    },
    pick(queue, controls, ask) {
      const candidates: Candidate[] = [];
      const inGroup = new Map<string, number>();
      const cap = controls.groupConcurrency;
      scan(
        store.lanes.get(queue),
        now,
        () => candidates.length < ask,
        (entry) => {
          const group = entry.job.group;
          if (cap !== null && group !== null) {
            const held = store.groupProcessing(queue, group) + (inGroup.get(group) ?? 0);
            if (held >= cap) return;
            inGroup.set(group, (inGroup.get(group) ?? 0) + 1);
          }
          candidates.push(candidate(entry));
        },
      );
      return candidates;
    },
    pickOpen: (limit) => readOpen(open, limit, now),
    take(chosen, starts) {
      for (const c of chosen) {
        store.transition(c.job, "processing", { attempts: c.job.attempts + 1, workerId }, now);
      }
      for (const [queue, jobs] of starts) {
        const times = store.queueStarts.get(queue) ?? [];
        times.push(...jobs.map(() => now));
        store.queueStarts.set(queue, times);
      }
      return chosen.map((c) => toJob(c.job));
    },
  };
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
  return runLimitedClaimSync(claimStore(store, request.workerId, controls, open, now), {
    ...request,
    limited,
  });
}
