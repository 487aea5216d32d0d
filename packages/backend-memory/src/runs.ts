/**
 * The runs facet: claim and settle.
 *
 * claim takes due queued jobs in (priority, scheduled_at, created_at) order across the requested queues'
 * lanes and marks them processing with attempts + 1 and the worker id. It returns every job it took,
 * including one past its max_attempts (core dead-letters those). A claim covering a limited queue runs
 * core's limited-claim program over the store in internal/queue-limits.ts.
 *
 * settle writes a batch of outcomes in one synchronous step, so nothing else runs in between. It plans
 * every item first (fence, dead-letter conflict, JSON encoding) without changing anything, then applies the
 * plan: a throw at any point before the apply leaves the store as it was, as a rolled-back transaction
 * would. (The fault hook wraps this facet from outside: internal/interrupted-move.ts.)
 */
import type {
  ClaimRequest,
  ClaimResult,
  DeadLetterSettlement,
  DoneSettlement,
  Job,
  ProgressUpdate,
  QueueControls,
  RequeueSettlement,
  RunsFacet,
  Settlement,
} from "@soniq/core/backend";
import { claimQueues, settleFlows } from "@soniq/core/backend";
import { runFlow } from "./internal/flow-store.js";
import { type Lane, type LaneEntry, readyLess } from "./internal/lanes.js";
import { claimWithLimits, controlledQueues } from "./internal/queue-limits.js";
import { deadLetterRow, encodeJson, type JobRecord, toJob } from "./internal/rows.js";
import { deleteSteps } from "./internal/step-rows.js";
import type { MemoryStore } from "./internal/store.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function runsFacet(store: MemoryStore): RunsFacet {
  return {
    claim: async (request) => claim(store, request),
    settle: async (items, workerId) => settle(store, items, workerId),
    reportProgress: async (updates, workerId) => reportProgress(store, updates, workerId),
  };
}

/**
 * Each run's latest progress, fenced by (id, attempt) and the worker when one is named, not by status (a
 * just-settled run's last value still lands: a done job keeps its worker).
 */
function reportProgress(
  store: MemoryStore,
  updates: readonly ProgressUpdate[],
  workerId: string | undefined,
): number {
  const encoded = updates.map((u) => encodeJson(u.value, "progress"));
  let written = 0;
  updates.forEach((update, i) => {
    const job = store.jobs.get(update.id);
    if (job === undefined || !job.live || job.attempts !== update.attempt) return;
    if (workerId !== undefined && job.workerId !== workerId) return;
    job.progressJson = encoded[i] as string;
    written++;
  });
  return written;
}

/**
 * Without a limited queue in the claim, a k-way merge over the open lanes. With one, core splits the queues
 * (`claimQueues`) and chooses what to take (internal/queue-limits.ts).
 */
function claim(store: MemoryStore, request: ClaimRequest): ClaimResult {
  const now = store.now();
  const controls = store.queueSettings.size === 0 ? NO_CONTROLS : controlledQueues(store);
  const { open, limited } = claimQueues(request.queues, controls);
  const lanes = selectLanes(store, open, controls);
  if (limited.length > 0) return claimWithLimits(store, request, controls, lanes, limited, now);
  const claimed: Job[] = [];
  while (claimed.length < request.limit) {
    const next = nextLane(lanes, now);
    if (next === undefined) break;
    next.lane.pop();
    const job = next.top.job;
    store.transition(
      job,
      "processing",
      { attempts: job.attempts + 1, workerId: request.workerId },
      now,
      true,
    );
    claimed.push(toJob(job));
  }
  return { jobs: claimed, capped: null };
}

const NO_CONTROLS: ReadonlyMap<string, QueueControls> = new Map();

/** The lanes of `open` (null: every queue without a control). */
function selectLanes(
  store: MemoryStore,
  open: readonly string[] | null,
  controls: ReadonlyMap<string, QueueControls>,
): Lane[] {
  const lanes: Lane[] = [];
  if (open === null) {
    // Drop drained lanes so claiming from every queue stays cheap when queue names come and go.
    for (const [queue, lane] of store.lanes) {
      if (lane.empty) store.lanes.delete(queue);
      else if (!controls.has(queue)) lanes.push(lane);
    }
    return lanes;
  }
  for (const queue of open) {
    const lane = store.lanes.get(queue);
    if (lane !== undefined) lanes.push(lane);
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

function settle(store: MemoryStore, items: readonly Settlement[], workerId: string | undefined): boolean[] {
  const taken = new Set<string>();
  const steps: Step[] = [];
  const applied = items.map((item) => {
    const step = plan(store, item, taken, workerId);
    if (step === null) return false;
    taken.add(item.id);
    steps.push(step);
    return true;
  });
  const now = store.now();
  const woken = new Set<string>();
  for (const step of steps) {
    apply(store, step, now, woken);
    writeDeliveries(store, step.item.deliveries);
  }
  // The flow steps this call ended (done, dead-lettered): their flows move on together, as on every backend.
  const flows = settleFlows(items, applied, () => new Date(now));
  if (flows !== null) runFlow(store, flows);
  for (const queue of woken) store.wake(queue);
  store.finished(steps.filter((step) => step.kind !== "requeue").map((step) => step.job.id));
  return applied;
}

/**
 * What an item would do, or null when it does not apply: the row is not processing under the item's
 * attempt (and the calling worker's claim, when `workerId` is given: a late write), an earlier item of this
 * call took it, or (dead_letter) the id already has a dead-letter row.
 */
function plan(
  store: MemoryStore,
  item: Settlement,
  taken: ReadonlySet<string>,
  workerId: string | undefined,
): Step | null {
  const job = store.processingAt(item.id, item.attempt, workerId);
  if (job === undefined || taken.has(item.id)) return null;
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
    case "done": {
      if (step.item.resultTtlMs === 0) {
        store.removeJob(job);
        deleteSteps(store, job.id);
      } else {
        const patch = { resultJson: step.resultJson, expiresAt: now + step.item.resultTtlMs };
        store.transition(job, "done", patch, now);
      }
      return;
    }
    case "requeue": {
      const { attempts, delayMs, lastError } = step.item;
      const patch = { attempts, workerId: null, scheduledAt: now + delayMs };
      store.transition(job, "queued", lastError === null ? patch : { ...patch, lastError }, now);
      if (delayMs === 0) woken.add(job.queue);
      return;
    }
    case "dead_letter": {
      store.addDeadLetter(deadLetterRow(store, job, step.item, step.tagsJson, now));
      store.removeJob(job);
      return;
    }
  }
}
