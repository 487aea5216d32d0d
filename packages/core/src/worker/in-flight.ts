/**
 * The jobs a worker is running now: starting each (metrics, `job:start`, its deadline), recording its
 * one outcome, and taking a run over when it times out, is cancelled, is lost to stale recovery, or
 * outlives a shutdown (the run is settled once: whichever comes first records the outcome, the others
 * find it settled). A taken-over handler that ignores its aborted signal keeps running in the background,
 * but its slot is freed and its late result ignored.
 */

import type { Runtime } from "../app/runtime.js";
import type { TypedEmitter } from "../common/typed-emitter.js";
import type { Job } from "../common/types.js";
import type { ProgressBuffer } from "../jobs/progress.js";
import type { RunOutcome } from "../observability/tracing.js";
import { DeadlineSweeper } from "./deadline-sweeper.js";
import type { WorkerEvents } from "./events.js";
import type { OutcomeWriter } from "./outcome-writer.js";
import {
  type AbandonReason,
  abandonError,
  executeJob,
  failureOutcome,
  type Outcome,
  Running,
  timeoutError,
} from "./runner.js";

export class InFlight {
  readonly #runs = new Map<string, Running>();
  readonly #deadlines: DeadlineSweeper;
  /** Jobs finished so far (the claim window grows only when jobs finished while a claim was in flight). */
  finished = 0;

  constructor(
    private readonly rt: Runtime,
    private readonly events: TypedEmitter<WorkerEvents>,
    private readonly writer: OutcomeWriter,
    /** Called after each outcome is recorded (the worker refills its slots and re-checks its waiters). */
    private readonly onFinished: () => void,
    /** False while someone awaits the runs (`runOnce`): then the deadline timer keeps the process alive. */
    unref: () => boolean,
    /** Where the runs' `ctx.progress()` values wait for the next heartbeat. */
    private readonly progress: ProgressBuffer | null = null,
  ) {
    this.#deadlines = new DeadlineSweeper(
      () => this.#runs.values(),
      (run) => this.#timeOut(run),
      unref,
    );
  }

  get size(): number {
    return this.#runs.size;
  }

  values(): IterableIterator<Running> {
    return this.#runs.values();
  }

  get(jobId: string): Running | undefined {
    return this.#runs.get(jobId);
  }

  start(job: Job, workerId: string | null): void {
    const rt = this.rt;
    const def = rt.registry.get(job.jobName);
    const run = new Running(job, def, workerId, rt, this.progress);
    this.#runs.set(job.id, run);
    if (rt.metrics.active) {
      rt.metrics.jobStart({ jobId: job.id, jobName: job.jobName, queue: job.queue, attempt: job.attempts });
    }
    this.events.emit("job:start", { job });
    const timeoutMs = def?.options.timeoutMs ?? 0;
    if (timeoutMs > 0) {
      run.deadline = Date.now() + timeoutMs;
      this.#deadlines.track(run);
    }
    void this.#run(run);
  }

  /** Takes the run over: aborts its signal and records the outcome (a nack at shutdown, else no write). */
  abandon(run: Running, why: AbandonReason): void {
    if (!run.settle()) return;
    run.takenOver = true;
    run.abort(abandonError(why));
    this.#record(run, why === "shutdown" ? { kind: "nack" } : { kind: "abandoned", why });
  }

  clearDeadlines(): void {
    this.#deadlines.clear();
  }

  /** Runs the job and records its outcome (an async method: no per-job callback closures). */
  async #run(run: Running): Promise<void> {
    let outcome: Outcome | null;
    try {
      outcome = await executeJob(this.rt, run);
    } catch (err) {
      this.rt.logger.error(
        { err, jobId: run.job.id },
        "job runner failed unexpectedly; counting a failed attempt",
      );
      // Settled already: by the runner before it failed (record it here), or by a timeout, cancel or
      // shutdown, which record it themselves (takenOver).
      if (!run.settle() && run.takenOver) return;
      outcome = await failureOutcome(this.rt, run, err);
    }
    if (outcome) this.#record(run, outcome);
  }

  #timeOut(run: Running): void {
    if (!run.settle()) return;
    run.takenOver = true;
    const err = timeoutError(run);
    run.abort(err);
    failureOutcome(this.rt, run, err).then((o) => this.#record(run, o));
  }

  #record(run: Running, outcome: Outcome): void {
    if (this.rt.plugins.length > 0) reportOutcome(this.rt, run, outcome);
    this.#runs.delete(run.job.id);
    this.finished++;
    this.writer.record(run, outcome);
    this.onFinished();
  }
}

/** What `onOutcome` hooks are told: the outcome's kind as DESIGN.md section 16 names it. */
function runOutcome(run: Running, outcome: Outcome): RunOutcome {
  const durationMs = performance.now() - run.startedAt;
  switch (outcome.kind) {
    case "retry":
      return { outcome: "retry", durationMs, error: outcome.error, deadLetterReason: null };
    case "dead_letter":
      return { outcome: "dead_letter", durationMs, error: outcome.error, deadLetterReason: outcome.reason };
    case "abandoned":
      return { outcome: outcome.why, durationMs, error: null, deadLetterReason: null };
    // A suspended run gave its job back to the queue without spending an attempt, as a snooze does.
    case "suspended":
    case "newer_version":
      return { outcome: "snooze", durationMs, error: null, deadLetterReason: null };
    case "completed":
      return { outcome: "done", durationMs, error: null, deadLetterReason: null };
    default:
      return { outcome: outcome.kind, durationMs, error: null, deadLetterReason: null };
  }
}

/** Calls every `onOutcome` hook synchronously; one that throws is logged and ignored. */
function reportOutcome(rt: Runtime, run: Running, outcome: Outcome): void {
  let report: RunOutcome | undefined;
  for (const plugin of rt.plugins) {
    if (!plugin.onOutcome) continue;
    report ??= runOutcome(run, outcome);
    try {
      plugin.onOutcome(run.ctx, report);
    } catch (err) {
      rt.logger.warn({ err, hook: "onOutcome", plugin: plugin.name ?? null }, "hook failed; ignoring");
    }
  }
}
