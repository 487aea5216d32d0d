/**
 * claim: take due queued jobs in (priority, scheduled_at, created_at) order across the requested
 * queues' lanes, mark them processing with attempts + 1 and the worker id. A job whose next run would
 * exceed max_attempts (its workers kept dying mid-run) goes to the dead-letter table instead.
 */
import type { ClaimRequest, Job } from "@soniq/core";
import { assertNoDeadLetterRow, moveToDeadLetter } from "./dead-letter.js";
import { invalidArgument } from "./errors.js";
import { type Lane, type LaneEntry, readyLess } from "./lanes.js";
import { type JobRecord, toJob } from "./rows.js";
import type { MemoryStore } from "./store.js";

export function claim(store: MemoryStore, request: ClaimRequest): Job[] {
  const { limit, queues, workerId } = request;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw invalidArgument(`claim limit must be an integer >= 1, got ${String(limit)}.`, { limit });
  }
  if (queues !== null && !Array.isArray(queues)) {
    throw invalidArgument("claim queues must be an array of queue names or null.", { queues });
  }
  const lanes = selectLanes(store, queues);
  if (lanes.length === 0) return [];
  const now = store.now();
  const claimed: Job[] = [];
  const skipped: JobRecord[] = [];
  while (claimed.length < limit) {
    const next = nextLane(lanes, now);
    if (next === undefined) break;
    next.pop();
    const job = next.top.job;
    if (job.attempts + 1 > job.maxAttempts) {
      exhaust(store, job, skipped);
      continue;
    }
    store.transition(
      job,
      "processing",
      { attempts: job.attempts + 1, workerId: workerId ?? null },
      now,
      true,
    );
    claimed.push(toJob(job));
  }
  // Put back jobs whose dead-letter move conflicted, so they stay queued and visible.
  for (const job of skipped) store.lane(job.queue).add(job, now);
  return claimed;
}

/** The crash-loop guard: dead-letter instead of running once more. */
function exhaust(store: MemoryStore, job: JobRecord, skipped: JobRecord[]): void {
  try {
    assertNoDeadLetterRow(store, job.id);
  } catch {
    skipped.push(job);
    return;
  }
  moveToDeadLetter(
    store,
    job,
    { reason: "max_retries_exceeded", error: job.lastError, tags: null },
    undefined,
    true,
  );
}

function selectLanes(store: MemoryStore, queues: readonly string[] | null): Lane[] {
  if (queues === null) {
    // Drop drained lanes so claiming from every queue stays cheap when queue names come and go.
    const lanes: Lane[] = [];
    for (const [queue, lane] of store.lanes) {
      if (lane.empty) store.lanes.delete(queue);
      else lanes.push(lane);
    }
    return lanes;
  }
  const lanes: Lane[] = [];
  for (const queue of new Set(queues)) {
    const lane = store.lanes.get(queue);
    if (lane !== undefined) lanes.push(lane);
  }
  return lanes;
}

interface Pick {
  lane: Lane;
  top: LaneEntry;
  pop(): void;
}

/** The lane whose first due job comes first in claim order (a k-way merge over the queues). */
function nextLane(lanes: readonly Lane[], now: number): Pick | undefined {
  let best: Lane | undefined;
  let bestTop: LaneEntry | undefined;
  for (const lane of lanes) {
    const top = lane.peek(now);
    if (top !== undefined && (bestTop === undefined || readyLess(top, bestTop))) {
      best = lane;
      bestTop = top;
    }
  }
  if (best === undefined || bestTop === undefined) return undefined;
  const lane = best;
  return { lane, top: bestTop, pop: () => lane.pop() };
}
