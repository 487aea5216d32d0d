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
 */
import type { Job } from "../types.js";

export class HeldJobs {
  readonly #held = new Set<string>();
  readonly #parked = new Map<string, Job>();

  /** Whether this worker holds the job (claimed, and its settlement not reported yet). */
  has(id: string): boolean {
    return this.#held.has(id);
  }

  /** Claims parked until their held run's settlement is reported. */
  get parked(): number {
    return this.#parked.size;
  }

  /**
   * Takes a claim's jobs: returns the ones to run (the same array when none is held already) and parks
   * the others. A later claim of an id already parked replaces it (the newest claim is the row's).
   */
  admit(jobs: Job[]): Job[] {
    let runnable: Job[] | null = null;
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i] as Job;
      if (!this.#held.has(job.id)) {
        this.#held.add(job.id);
        runnable?.push(job);
        continue;
      }
      runnable ??= jobs.slice(0, i);
      this.#parked.set(job.id, job);
    }
    return runnable ?? jobs;
  }

  /**
   * The settlement of a held job was reported (applied or not), or the job left without one (abandoned,
   * cancelled while buffered). Returns the claim parked behind it, to give back; the id stays held until
   * that give-back is reported in turn.
   */
  settled(id: string): Job | undefined {
    const parked = this.#parked.get(id);
    if (parked === undefined) this.#held.delete(id);
    else this.#parked.delete(id);
    return parked;
  }
}
