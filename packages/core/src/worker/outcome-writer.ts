/**
 * Turns every outcome into its settlement (settlements.ts) and writes them all through one batcher into
 * `runs.settle`, then reports each: metrics at once, the worker event once the backend confirms the item
 * applied. An item the backend did not apply (the fence: the job was cancelled or recovered meanwhile, or
 * already dead-lettered) is logged at debug. A settle call that fails is logged at `error`, emitted as an
 * `error` event and counted (`write_failed`) once the batcher's retries are spent; then its jobs are given
 * back (a nack: queued now, attempt kept). A give-back that fails too leaves the jobs *stranded*: the
 * worker withholds its heartbeat while any are (upkeep.ts), so it turns stale and recovery requeues them
 * within `staleAfterMs` even though the process lives (DESIGN.md section 7).
 *
 * Every settle call names this worker, so an item applies only to this worker's claim (see `RunsFacet.settle`).
 * The writer also holds each claimed job's id until its settlement is reported (held-jobs.ts): a claim that
 * returns a held job (an earlier claim was lost) is given back once the held run's outcome is written.
 */

import type { Runtime } from "../app/runtime.js";
import type { TypedEmitter } from "../common/typed-emitter.js";
import type { Job } from "../common/types.js";
import type { Settlement } from "../contract/index.js";
import type { JobEndStatus } from "../observability/sink.js";
import type { DeadLetterReason } from "../schema/constants.js";
import type { WorkerEvents } from "./events.js";
import { HeldJobs } from "./held-jobs.js";
import type { Outcome, Running } from "./runner.js";
import { SettleBatcher } from "./settle-batcher.js";
import {
  deadLetterSettlement,
  doneSettlement,
  nackSettlement,
  newerVersionSettlement,
  overAttemptsSettlement,
  releaseSettlement,
  retrySettlement,
  snoozeSettlement,
} from "./settlements.js";
import { completedEvents, deadLetterEvents, retryEvents, withDeliveries } from "./webhook-events.js";

/**
 * What is written, besides the runner's outcomes: a claimed job given back unstarted at shutdown, a failed
 * write's give-back, and a claim of a job this worker still held, given back once the held run settled.
 */
type Written =
  | Exclude<Outcome, { kind: "abandoned" | "suspended" | "completed" }>
  | { kind: "release" }
  | { kind: "give_back" }
  | { kind: "reclaim" };

const RELEASE: Written = Object.freeze({ kind: "release" });
const GIVE_BACK: Written = Object.freeze({ kind: "give_back" });
const RECLAIM: Written = Object.freeze({ kind: "reclaim" });

/** A run's own outcome (not a give-back of a job that did not run, nor a shutdown's nack). */
function ranOutcome(outcome: Written | Outcome | undefined): boolean {
  const kind = outcome?.kind;
  return (
    kind === "done" ||
    kind === "retry" ||
    kind === "dead_letter" ||
    kind === "snooze" ||
    kind === "newer_version"
  );
}

/** What the writer keeps per settlement to report it once written (a `Running`, or a job never run). */
interface Pending {
  readonly job: Job;
  outcome: Written | Outcome | undefined;
  durationMs: number;
}

export class OutcomeWriter {
  readonly #batcher: SettleBatcher<Pending>;
  /** Give-backs whose write failed too, by job id: the worker withholds its heartbeat while any remain. */
  readonly #stranded = new Map<string, Settlement>();
  readonly #held = new HeldJobs();
  /** The (job name, version) pairs a give-back to a newer version was logged for: once each. */
  readonly #newerLogged = new Set<string>();
  /** The worker's `newerVersionDelayMs`. */
  newerVersionDelayMs = 30_000;

  constructor(
    private readonly rt: Runtime,
    private readonly events: TypedEmitter<WorkerEvents>,
    private readonly workerId: string,
    batchSize: number,
    /** Called after each write settles (rows left processing: the worker may claim; it re-checks its waiters). */
    onSettled: () => void,
    /** Whether the flush may be unref'd. */
    unref: () => boolean,
    retryDelaysMs?: readonly number[],
  ) {
    const { runs } = rt.backend;
    this.#batcher = new SettleBatcher(
      (items: Settlement[]) => runs.settle(items, workerId),
      batchSize,
      (tags: Pending[], applied: boolean[], items: readonly Settlement[]) =>
        this.#written(tags, applied, items),
      (tags, err) => this.#failed(tags, err),
      onSettled,
      unref,
      retryDelaysMs,
    );
  }

  /** Jobs whose settlement and give-back both failed (they stay processing under this worker). */
  get stranded(): number {
    return this.#stranded.size;
  }

  /** Tries the stranded give-backs once more; true when none remain. */
  async giveBackStranded(): Promise<boolean> {
    if (this.#stranded.size === 0) return true;
    const items = [...this.#stranded.values()];
    try {
      await this.rt.backend.runs.settle(items, this.workerId);
    } catch (err) {
      this.rt.logger.warn({ err, jobIds: [...this.#stranded.keys()] }, "give-back failed again");
      return false;
    }
    for (const item of items) {
      this.#stranded.delete(item.id);
      this.#reported(item.id);
    }
    return this.#stranded.size === 0;
  }

  /**
   * Before a stop or a runOnce marks the worker stopped: one more try at giving back the jobs whose outcome and
   * give-back both failed, so they are queued now rather than at the next recovery. Whatever still fails
   * stays `processing` under the (then stopped) worker, which stale recovery requeues.
   */
  async lastGiveBack(): Promise<void> {
    if (this.#stranded.size === 0) return;
    const { logger } = this.rt;
    if (await this.giveBackStranded()) {
      logger.warn({ workerId: this.workerId }, "jobs whose outcome could not be written were given back");
    } else {
      logger.error(
        { workerId: this.workerId, stranded: this.#stranded.size },
        "jobs whose outcome could not be written stay processing until stale recovery requeues them",
      );
    }
  }

  /** A claim is sent (held-jobs.ts: settlements reported until its answer are remembered). */
  claimStarted(): void {
    this.#held.claimStarted();
  }

  claimFailed(): void {
    this.#held.claimFailed();
  }

  /**
   * A claim's jobs: the ones to run. A job this worker still holds is parked; one whose settlement was
   * reported while the claim was on its way is given back at once (held-jobs.ts).
   */
  admit(jobs: Job[]): Job[] {
    const { runnable, late } = this.#held.admit(jobs);
    for (const job of late)
      this.#batcher.add(releaseSettlement(job), { job, outcome: RECLAIM, durationMs: 0 });
    return runnable;
  }

  /** Whether this worker holds the job: claimed, and its settlement not reported yet. */
  holds(jobId: string): boolean {
    return this.#held.has(jobId);
  }

  /** A claimed job left without a settlement (cancelled while buffered): it is no longer held. */
  dropped(jobId: string): void {
    this.#reported(jobId);
  }

  /** Settlements queued or in flight. */
  get busy(): boolean {
    return this.#batcher.busy;
  }

  /** Writes queued settlements now instead of on the next turn of the event loop. */
  flush(): void {
    this.#batcher.flush();
  }

  /** Records a run's outcome (metrics now; the event once the settlement is written). */
  record(run: Running, outcome: Outcome): void {
    const { job } = run;
    run.outcome = outcome;
    run.durationMs = performance.now() - run.startedAt;
    switch (outcome.kind) {
      case "done": {
        this.#metrics(run, "done");
        const resultTtlMs = run.def?.options.resultTtlMs ?? this.rt.options.resultTtlMs;
        const settlement = doneSettlement(job, outcome.result, resultTtlMs, run.flow?.added);
        this.#batcher.add(withDeliveries(settlement, completedEvents(this.rt, job, outcome.result)), run);
        return;
      }
      case "retry": {
        this.#metrics(run, "failed", { error: outcome.error });
        const settlement = retrySettlement(job, outcome.error, outcome.delayMs);
        const events = retryEvents(this.rt, job, outcome.error, settlement.delayMs);
        this.#batcher.add(withDeliveries(settlement, events), run);
        return;
      }
      case "dead_letter": {
        this.#metrics(run, "dead_letter", { error: outcome.error, reason: outcome.reason });
        const settlement = deadLetterSettlement(job, outcome.reason, outcome.error);
        const events = deadLetterEvents(this.rt, job, outcome.reason, outcome.error, true);
        this.#batcher.add(withDeliveries(settlement, events), run);
        return;
      }
      case "snooze":
        this.#metrics(run, "snoozed");
        this.#batcher.add(snoozeSettlement(job, outcome.delayMs, outcome.reason), run);
        return;
      case "nack":
        this.#metrics(run, "nacked");
        this.rt.logger.warn({ jobId: job.id, reason: "shutdown_timeout" }, "shutdown_nack");
        this.rt.metrics.event("shutdown_nack", { jobId: job.id, reason: "shutdown_timeout" });
        this.#batcher.add(nackSettlement(job), run);
        return;
      case "newer_version": {
        this.#metrics(run, "snoozed");
        const key = `${job.jobName}@${outcome.version}`;
        if (!this.#newerLogged.has(key)) {
          this.#newerLogged.add(key);
          this.rt.logger.warn(
            { jobName: job.jobName, version: outcome.version, handles: run.def?.options.version ?? null },
            "a job's args are newer than this worker's handler (a rolling deploy?): given back without spending an attempt until a worker on the new code takes it",
          );
        }
        this.#batcher.add(newerVersionSettlement(job, this.newerVersionDelayMs), run);
        return;
      }
      case "suspended":
        // The wait's own transaction put the job back to queued: nothing more to write.
        this.#metrics(run, "snoozed");
        this.events.emit("job:snoozed", {
          job,
          delayMs: Math.max(0, outcome.wakeAt.getTime() - this.rt.options.clock.now()),
        });
        this.#reported(job.id, true);
        return;
      case "completed":
        // ctx.complete committed the done, the result and the flow and webhook effects with the handler's writes.
        this.#metrics(run, "done");
        this.rt.webhooks.notify();
        if (this.events.hasListeners("job:done"))
          this.events.emit("job:done", { job, result: outcome.result, durationMs: run.durationMs });
        this.#reported(job.id, true);
        return;
      case "abandoned":
        this.#metrics(run, "cancelled");
        this.rt.logger.info(
          { jobId: job.id, why: outcome.why },
          "job abandoned; its late result will be ignored",
        );
        this.events.emit("job:cancelled", { job, why: outcome.why });
        this.#reported(job.id);
        return;
    }
  }

  /** A job the claim took past its attempts: dead-lettered without running (`max_retries_exceeded`). */
  overAttempts(job: Job): void {
    const settlement = overAttemptsSettlement(job);
    const error =
      settlement.error ??
      `claimed for attempt ${job.attempts} of ${job.maxAttempts}: earlier runs never settled`;
    const outcome: Written = { kind: "dead_letter", reason: settlement.reason, error };
    const pending = { job, outcome, durationMs: 0 };
    this.#metrics(pending, "dead_letter", { error, reason: settlement.reason });
    const events = deadLetterEvents(this.rt, job, settlement.reason, error, false);
    this.#batcher.add(withDeliveries(settlement, events), pending);
  }

  /** Claimed jobs never started, given back at shutdown with their claim's attempt refunded. */
  release(jobs: readonly Job[]): void {
    for (const job of jobs)
      this.#batcher.add(releaseSettlement(job), { job, outcome: RELEASE, durationMs: 0 });
  }

  #metrics(run: Pending, status: JobEndStatus, extra?: { error?: string; reason?: DeadLetterReason }): void {
    const m = this.rt.metrics;
    if (!m.active) return;
    const { job } = run;
    m.jobEnd({
      jobId: job.id,
      jobName: job.jobName,
      queue: job.queue,
      attempt: job.attempts,
      status,
      durationMs: run.durationMs,
      ...extra,
    });
  }

  #written(tags: Pending[], applied: boolean[], items: readonly Settlement[]): void {
    if (items.some((item, i) => item.deliveries !== undefined && applied[i] === true)) {
      this.rt.webhooks.notify();
    }
    for (let i = 0; i < tags.length; i++) {
      const tag = tags[i] as Pending;
      this.#reported(tag.job.id, applied[i] === true && ranOutcome(tag.outcome));
      if (applied[i] === true) this.#applied(tag);
      else {
        this.rt.logger.debug(
          { jobId: tag.job.id, outcome: tag.outcome?.kind },
          "settlement not applied: the job is no longer processing under this attempt (cancelled, recovered or already dead-lettered)",
        );
      }
    }
  }

  #applied({ job, outcome, durationMs }: Pending): void {
    const events = this.events;
    switch (outcome?.kind) {
      case "done":
        if (events.hasListeners("job:done"))
          events.emit("job:done", { job, result: outcome.result, durationMs });
        return;
      case "retry":
        events.emit("job:failed", { job, error: outcome.error, delayMs: outcome.delayMs });
        return;
      case "dead_letter":
        events.emit("job:dead_letter", { job, reason: outcome.reason, error: outcome.error });
        return;
      case "snooze":
        events.emit("job:snoozed", { job, delayMs: outcome.delayMs });
        return;
      case "newer_version":
        events.emit("job:snoozed", { job, delayMs: this.newerVersionDelayMs });
        return;
      case "nack":
        events.emit("job:nacked", { job });
        return;
      case "give_back":
        this.rt.logger.warn({ jobId: job.id }, "job given back after its outcome could not be written");
        return;
      case "release":
        this.rt.logger.info(
          { jobId: job.id, reason: "released unstarted at worker shutdown" },
          "job released",
        );
        return;
      case "reclaim":
        this.rt.logger.warn(
          { jobId: job.id, attempt: job.attempts },
          "a claim returned a job this worker had already taken (an earlier claim was lost); it was given back",
        );
        return;
    }
  }

  /** A held job's settlement was reported: a claim parked behind it is given back now (held-jobs.ts). */
  #reported(jobId: string, ranAndApplied = false): void {
    const parked = this.#held.settled(jobId, ranAndApplied);
    if (parked !== undefined) {
      this.#batcher.add(releaseSettlement(parked), { job: parked, outcome: RECLAIM, durationMs: 0 });
    }
  }

  #failed(tags: Pending[], error: unknown): void {
    const jobIds = tags.map((t) => t.job.id);
    this.rt.logger.error(
      { err: error, op: "settle", jobIds, workerId: this.workerId },
      "state write failed after its retries; the jobs are given back (if that fails too, they are left for stale-worker recovery)",
    );
    this.rt.metrics.event("write_failed", { op: "settle", jobIds });
    this.events.emit("error", { error, during: "settle" });
    for (const tag of tags) {
      const kind = tag.outcome?.kind;
      const settlement =
        kind === "release" || kind === "reclaim" ? releaseSettlement(tag.job) : nackSettlement(tag.job);
      if (tag.outcome === GIVE_BACK) this.#stranded.set(tag.job.id, settlement);
      else this.#batcher.add(settlement, { job: tag.job, outcome: GIVE_BACK, durationMs: 0 });
    }
  }
}
