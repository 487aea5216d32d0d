/**
 * One claim round trip. `runs.claim` returns every job it took, including any it took past its
 * `maxAttempts` (earlier runs that never settled: their workers kept dying). Those are not run again:
 * they are dead-lettered through the outcome writer, and still count as taken, so a full claim is never
 * mistaken for a drained queue.
 */
import type { ClaimCap, ClaimRequest } from "../contract/index.js";
import type { Runtime } from "../runtime.js";
import type { Job } from "../types.js";
import type { OutcomeWriter } from "./outcome-writer.js";
import { isOverAttempts } from "./settlements.js";

export interface Claimed {
  /** How many jobs the claim took (a result shorter than the limit means nothing more is due, unless capped). */
  taken: number;
  /** The ones to run. */
  runnable: Job[];
  /** A queue limit held due jobs back (see `ClaimResult.capped`). */
  capped: ClaimCap | null;
}

export async function claimJobs(rt: Runtime, writer: OutcomeWriter, request: ClaimRequest): Promise<Claimed> {
  const { jobs, capped } = await rt.backend.runs.claim(request);
  if (!jobs.some(isOverAttempts)) return { taken: jobs.length, runnable: jobs, capped };
  const runnable: Job[] = [];
  for (const job of jobs) {
    if (isOverAttempts(job)) writer.overAttempts(job);
    else runnable.push(job);
  }
  return { taken: jobs.length, runnable, capped };
}
