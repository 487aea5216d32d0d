/**
 * The job ids a worker holds, from the claim that took them until the backend reported their settlement,
 * and the claims of a held id that came back meanwhile (parked).
 *
 * A claim can come back for a job this worker still holds only when the earlier claim was lost: Postgres
 * claims commit asynchronously, so a database crash or a failover can lose the last ones, while the worker
 * already runs (or buffers) what they returned. The job is queued again, and this worker's next claim may take
 * it, at the same attempt. Running it a second time would run it twice at once, and the first run's
 * outcome, which the settle fence (id, attempt, worker) cannot tell from the new claim's, could mark it done
 * while the second run starts: the job would run again after its done was committed.
 *
 * So a parked claim never runs. Once the held run's settlement is reported, the parked claim is given back
 * (a release: queued now, its claim's attempt refunded), fenced like any settlement: it applies only when
 * the parked claim still stands (the held run's outcome did not apply to its row), and the job is then
 * claimed again like any queued job. A job that finished under the parked claim's row (the held run's done
 * applied to it) stays done. The same holds when a requeue with no delay let this worker claim a job again
 * before its settle call returned: the claim is given back and taken again at once.
 *
 * The claim and the settle travel on different connections, so their answers can arrive in the other order
 * than the database applied them: the claim takes the job again, the held run's done applies to that row,
 * and the worker hears the done before the claim's answer. By then the id is no longer held, and running what
 * the claim returned would run the job after its done (the fault suite's crash after a claim once did). So
 * the ids whose run's outcome (done, retry, snooze, dead letter) was reported applied while a claim was on its
 * way are remembered until that claim answers, and a job it returns among them is given back at once (`late`),
 * under the same fence. Only a run's applied outcome counts: a give-back that applied leaves the job queued for
 * any claim to take and run, and one that did not apply changed nothing (counting those would give the same
 * job back again and again while claims keep overlapping the reports).
 */
import type { Job } from "../common/types.js";

const NONE: readonly Job[] = Object.freeze([]);

export class HeldJobs {
  readonly #held = new Set<string>();
  readonly #parked = new Map<string, Job>();
  /** Ids whose settlement was reported while the current claim was on its way (`claimStarted` to `admit`). */
  readonly #settledMidClaim = new Set<string>();
  #claimOnItsWay = false;

  /** Whether this worker holds the job (claimed, and its settlement not reported yet). */
  has(id: string): boolean {
    return this.#held.has(id);
  }

  /** Claims parked until their held run's settlement is reported. */
  get parked(): number {
    return this.#parked.size;
  }

  /** A claim is sent: settlements reported from now until its answer are remembered (see the file comment). */
  claimStarted(): void {
    this.#claimOnItsWay = true;
    this.#settledMidClaim.clear();
  }

  /** The claim failed: no answer will be admitted. */
  claimFailed(): void {
    this.#claimOnItsWay = false;
    this.#settledMidClaim.clear();
  }

  /**
   * Takes a claim's answer: `runnable`, the jobs to run (the same array when nothing is held or late), and
   * `late`, the jobs whose settlement was reported while the claim was on its way, to give back at once (they
   * stay held until that give-back is reported). A job still held is parked; a later claim of an id already
   * parked replaces it (the newest claim is the row's).
   */
  admit(jobs: Job[]): { runnable: Job[]; late: readonly Job[] } {
    const mid = this.#settledMidClaim;
    this.#claimOnItsWay = false;
    let runnable: Job[] | null = null;
    let late: Job[] | null = null;
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i] as Job;
      if (this.#held.has(job.id)) {
        runnable ??= jobs.slice(0, i);
        this.#parked.set(job.id, job);
        continue;
      }
      this.#held.add(job.id);
      if (mid.size > 0 && mid.has(job.id)) {
        runnable ??= jobs.slice(0, i);
        late ??= [];
        late.push(job);
        continue;
      }
      runnable?.push(job);
    }
    mid.clear();
    return { runnable: runnable ?? jobs, late: late ?? NONE };
  }

  /**
   * The settlement of a held job was reported (applied or not), or the job left without one (abandoned,
   * cancelled while buffered); `ranAndApplied`: it was a run's outcome and it applied. Returns the claim parked
   * behind it, to give back; the id stays held until that give-back is reported in turn.
   */
  settled(id: string, ranAndApplied = false): Job | undefined {
    const parked = this.#parked.get(id);
    if (parked === undefined) {
      this.#held.delete(id);
      if (ranAndApplied && this.#claimOnItsWay) this.#settledMidClaim.add(id);
    } else this.#parked.delete(id);
    return parked;
  }
}
