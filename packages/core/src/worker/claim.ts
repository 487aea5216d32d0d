/**
 * One claim round trip. `runs.claim` returns every job it took, including any it took past its
 * `maxAttempts` (earlier runs that never settled: their workers kept dying). Those are not run again:
 * they are dead-lettered through the outcome writer, and still count as taken, so a full claim is never
 * mistaken for a drained queue. A job this worker still holds from an earlier, lost claim is not run again
 * either: the writer parks it and gives it back once the held run settled, or gives it back at once when that
 * run's settlement was reported while the claim was on its way (held-jobs.ts).
 */

import type { Runtime } from "../app/runtime.js";
import type { Job } from "../common/types.js";
import type { ClaimCap, ClaimRequest } from "../contract/index.js";
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
  writer.claimStarted();
  let result: Awaited<ReturnType<typeof rt.backend.runs.claim>>;
  try {
    result = await rt.backend.runs.claim(request);
  } catch (err) {
    writer.claimFailed();
    throw err;
  }
  const { capped } = result;
  const taken = result.jobs.length;
  const jobs = writer.admit(result.jobs);
  if (!jobs.some(isOverAttempts)) return { taken, runnable: jobs, capped };
  const runnable: Job[] = [];
  for (const job of jobs) {
    if (isOverAttempts(job)) writer.overAttempts(job);
    else runnable.push(job);
  }
  return { taken, runnable, capped };
}
