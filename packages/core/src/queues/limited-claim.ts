/**
 * The claim of a batch that covers a limited queue, written once as a program over a small store each
 * backend provides inside its claim's transaction, the way the flow engine is (`flows/engine.ts`): the
 * program is a generator that yields store calls; `runLimitedClaimSync` drives it over a synchronous store
 * (SQLite, memory), `runLimitedClaimAsync` over an asynchronous one (Postgres). The rules it applies
 * (`claim-rules.ts`) live in core and nowhere else; a store only locks, reads and writes.
 *
 * The program, given the limited queues `claimQueues` found in the request:
 *  1. locks those queues (where other processes claim too) and reads their controls as they stand now;
 *     a queue paused since, or gone, is left out;
 *  2. for each, in name order, reads its usage (due jobs counted up to one past the `limitedMax` budget),
 *     then its first claimable jobs in claim order, as many as min(budget, slots, due);
 *  3. reads the open queues' first `limit` due jobs;
 *  4. lets `chooseClaim` pick, takes the chosen jobs (a start recorded for each job of a rate-limited
 *     queue) and returns the jobs taken, in claim order, with the `capped` answer.
 * Nothing is taken when nothing was chosen.
 */

import { type AsyncStore, type Program, runAsync, runSync } from "../common/program.js";
import type { ClaimCap } from "../contract/index.js";
import {
  type ClaimCandidate,
  chooseClaim,
  type LimitedQueueRead,
  limitedBudget,
  type QueueControls,
  type QueueUsage,
  queueSlots,
} from "./claim-rules.js";

/**
 * The storage a limited claim reads and writes, inside the claim's transaction. `C` is a backend's candidate
 * (its claim-order key and whatever it needs to take it), `J` the job it returns once taken.
 */
export interface LimitedClaimStore<
  C extends ClaimCandidate = ClaimCandidate,
  J extends { id: string } = { id: string },
> {
  /**
   * Locks these queues for the rest of the claim, so limited claims of one queue serialise (Postgres: their
   * `soniq_queues` rows FOR UPDATE, in name order; a store whose claim already runs alone locks nothing), and
   * returns their controls as stored now, by name (other queues' too, if that is simpler). A queue without
   * stored controls is left out.
   */
  lockQueues(names: readonly string[]): ReadonlyMap<string, QueueControls>;
  /**
   * The queue's usage under its lock: what is processing (read when it has a concurrency), the starts in the
   * rate window (read when rate-limited, the window's older starts pruned first), and its due jobs counted up
   * to `dueUpTo`.
   */
  usage(queue: string, controls: QueueControls, dueUpTo: number): QueueUsage;
  /**
   * The queue's first `ask` claimable jobs in claim order: with a `groupConcurrency`, a job of a group fits
   * while the group's processing jobs plus the ones picked before it stay within the cap (a job without a
   * group is not capped).
   */
  pick(queue: string, controls: QueueControls, ask: number): C[];
  /** The first `limit` due jobs of the claim's open queues (never one of a limited queue), in claim order. */
  pickOpen(limit: number): C[];
  /**
   * Marks the chosen jobs processing where they are still queued (attempts + 1, the claim's worker stamped),
   * records one start for each job in `starts` (the jobs taken from each rate-limited queue, by queue), and
   * returns the jobs it took, in any order.
   */
  take(chosen: readonly C[], starts: ReadonlyMap<string, readonly C[]>): J[];
}

/** The same store with every method asynchronous (Postgres). */
export type AsyncLimitedClaimStore<
  C extends ClaimCandidate = ClaimCandidate,
  J extends { id: string } = { id: string },
> = {
  [K in keyof LimitedClaimStore<C, J>]: (
    ...args: Parameters<LimitedClaimStore<C, J>[K]>
  ) => Promise<ReturnType<LimitedClaimStore<C, J>[K]>>;
};

/** What the program needs of the claim: its `limit` and `limitedMax`, and the limited queues it covers. */
interface LimitedClaimRequest {
  limit: number;
  limitedMax?: number;
  limited: readonly string[];
}

/** The program runs over candidates and jobs of any shape; the runners give them back their backend's types. */
type Store = LimitedClaimStore;
type Call = { [K in keyof Store]: { op: K; args: Parameters<Store[K]> } }[keyof Store];
type ClaimProgram = Generator<Call, { jobs: { id: string }[]; capped: ClaimCap | null }, unknown>;

/**
 * A store call to yield (`(yield call(...)) as Answer<K>`): yielded directly rather than through a delegated
 * generator, since a claim is a hot path and each delegation would allocate one more generator.
 */
function call<K extends keyof Store>(op: K, ...args: Parameters<Store[K]>): Call {
  return { op, args } as Call;
}

type Answer<K extends keyof Store> = ReturnType<Store[K]>;

function* limitedClaim(request: LimitedClaimRequest): ClaimProgram {
  const locked = (yield call("lockQueues", request.limited)) as Answer<"lockQueues">;
  const budget = limitedBudget(request);
  const reads: LimitedQueueRead[] = [];
  const names = request.limited.length > 1 ? [...request.limited].sort() : request.limited;
  for (const queue of names) {
    const controls = locked.get(queue);
    if (controls === undefined || controls.paused) continue;
    const usage = (yield call("usage", queue, controls, budget + 1)) as Answer<"usage">;
    const ask = Math.min(budget, queueSlots(controls, usage), usage.due);
    const candidates = ask > 0 ? ((yield call("pick", queue, controls, ask)) as Answer<"pick">) : [];
    reads.push({ queue, limits: controls, usage, candidates });
  }
  const open = (yield call("pickOpen", request.limit)) as Answer<"pickOpen">;
  const choice = chooseClaim(request, open, reads);
  if (choice.chosen.length === 0) return { jobs: [], capped: choice.capped };
  const starts = new Map<string, ClaimCandidate[]>();
  for (const read of reads) {
    const taken = choice.fromLimited.get(read.queue) ?? [];
    if (read.limits.rateLimit !== null && taken.length > 0) starts.set(read.queue, taken);
  }
  const taken = (yield call("take", choice.chosen, starts)) as Answer<"take">;
  // Usually every chosen job, in claim order. Otherwise a chosen job another claim took meanwhile is left
  // out, and the rest keep the claim order.
  if (taken.length === choice.chosen.length && taken.every((job, i) => job.id === choice.chosen[i]?.id)) {
    return { jobs: taken, capped: choice.capped };
  }
  const byId = new Map(taken.map((job) => [job.id, job]));
  return { jobs: choice.chosen.flatMap((c) => byId.get(c.id) ?? []), capped: choice.capped };
}

/**
 * Runs the limited claim over a synchronous store (inside the caller's synchronous transaction): the jobs
 * taken, in claim order, and the `capped` answer.
 */
export function runLimitedClaimSync<C extends ClaimCandidate, J extends { id: string }>(
  store: LimitedClaimStore<C, J>,
  request: LimitedClaimRequest,
): { jobs: J[]; capped: ClaimCap | null } {
  // The jobs are the ones `take` returned: the store's own `J`s.
  return runSync(limitedClaim(request) as unknown as Program<typeof store, unknown>, store) as {
    jobs: J[];
    capped: ClaimCap | null;
  };
}

/** Runs the limited claim over an asynchronous store (inside the caller's transaction). */
export async function runLimitedClaimAsync<C extends ClaimCandidate, J extends { id: string }>(
  store: AsyncLimitedClaimStore<C, J>,
  request: LimitedClaimRequest,
): Promise<{ jobs: J[]; capped: ClaimCap | null }> {
  const program = limitedClaim(request) as unknown as Program<LimitedClaimStore<C, J>, unknown>;
  const asyncStore = store as unknown as AsyncStore<LimitedClaimStore<C, J>>;
  return (await runAsync(program, asyncStore)) as { jobs: J[]; capped: ClaimCap | null };
}
