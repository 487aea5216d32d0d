/**
 * Turns a run's outcome into its one backend write, then reports it: metrics at once, worker events once
 * the write is confirmed. Successful completions go through the `CompletionBatcher`; retries, dead
 * letters, snoozes and nacks are one call each. A write that fails is logged at `error`, emitted as an
 * `error` event and counted (`write_failed`): the job stays processing and stale recovery requeues it.
 * A write the backend ignores (the fence: the job was cancelled or recovered meanwhile) is logged at debug.
 */
import type { CompleteItem, DeadLetterItem } from "./backend.js";
import type { TypedEmitter } from "./events.js";
import type { Outcome, Running } from "./job-runner.js";
import type { JobEndStatus } from "./metrics.js";
import type { Runtime } from "./runtime.js";
import type { DeadLetterReason } from "./schema/constants.js";
import type { WorkerEvents } from "./worker-events.js";
import { WriteBatcher } from "./write-batcher.js";

/** Calls a backend write, turning a synchronous throw into a rejection. */
function call(write: () => Promise<boolean>): Promise<boolean> {
  try {
    return write();
  } catch (err) {
    return Promise.reject(err);
  }
}

export class OutcomeWriter {
  #writes = 0;
  readonly #completions: WriteBatcher<CompleteItem, Running, number>;
  /** Only when the backend implements `markJobsDeadLetter`; else one `markJobDeadLetter` per job. */
  readonly #deadLetters: WriteBatcher<DeadLetterItem, Running, string[]> | null;

  constructor(
    private readonly rt: Runtime,
    private readonly events: TypedEmitter<WorkerEvents>,
    private readonly workerId: string,
    completeBatchSize: number,
    /** Called when a write settles (the worker re-checks what it waits for). */
    private readonly onSettled: () => void,
    /** Whether the completion flush may be unref'd. */
    unref: () => boolean,
  ) {
    const { backend } = rt;
    this.#completions = new WriteBatcher(
      (items: CompleteItem[]) => backend.complete(items),
      completeBatchSize,
      (runs: Running[]) => this.#completed(runs),
      (runs, err) => this.#failed(runs, err, "complete"),
      onSettled,
      unref,
    );
    const moveMany = backend.markJobsDeadLetter?.bind(backend);
    this.#deadLetters = moveMany
      ? new WriteBatcher(
          (items: DeadLetterItem[]) => moveMany(items),
          completeBatchSize,
          (runs: Running[], moved: string[]) => this.#deadLettered(runs, moved),
          (runs, err) => this.#failed(runs, err, "markJobsDeadLetter"),
          onSettled,
          unref,
        )
      : null;
  }

  /** Writes queued or in flight. */
  get busy(): boolean {
    return this.#writes > 0 || this.#completions.busy || (this.#deadLetters?.busy ?? false);
  }

  /** Writes queued completions now instead of on the next turn of the event loop. */
  flush(): void {
    this.#completions.flush();
    this.#deadLetters?.flush();
  }

  record(run: Running, outcome: Outcome): void {
    const { backend } = this.rt;
    const { job } = run;
    const ref = { id: job.id, attempt: job.attempts };
    switch (outcome.kind) {
      case "done": {
        run.result = outcome.result;
        run.durationMs = performance.now() - run.startedAt;
        this.#metrics(run, "done");
        const resultTtlMs = run.def?.options.resultTtlMs ?? this.rt.options.resultTtlMs;
        this.#completions.add(
          { id: job.id, attempt: job.attempts, result: outcome.result, resultTtlMs },
          run,
        );
        return;
      }
      case "retry": {
        const { error, delayMs } = outcome;
        this.#metrics(run, "failed", { error });
        this.#write(
          run,
          "retry",
          () => backend.retry(ref, { error, delayMs }),
          () => this.events.emit("job:failed", { job, error, delayMs }),
        );
        return;
      }
      case "dead_letter": {
        const { reason, error } = outcome;
        this.#metrics(run, "dead_letter", { error, reason });
        run.deadLetter = { reason, error };
        if (this.#deadLetters) {
          this.#deadLetters.add({ id: job.id, attempt: job.attempts, reason, error }, run);
          return;
        }
        this.#write(
          run,
          "markJobDeadLetter",
          () => backend.markJobDeadLetter(job.id, { reason, error, attempt: job.attempts }),
          () => this.events.emit("job:dead_letter", { job, reason, error }),
        );
        return;
      }
      case "snooze": {
        const { delayMs, reason } = outcome;
        this.#metrics(run, "snoozed");
        this.#write(
          run,
          "reschedule",
          () => backend.reschedule(ref, { delayMs, reason }),
          () => this.events.emit("job:snoozed", { job, delayMs }),
        );
        return;
      }
      case "abandoned":
        this.#metrics(run, "cancelled");
        this.rt.logger.info(
          { jobId: job.id, why: outcome.why },
          "job abandoned; its late result will be ignored",
        );
        this.events.emit("job:cancelled", { job, why: outcome.why });
        return;
      case "nack":
        this.#metrics(run, "nacked");
        this.rt.logger.warn({ jobId: job.id, reason: "shutdown_timeout" }, "shutdown_nack");
        this.rt.metrics.event("shutdown_nack", { jobId: job.id, reason: "shutdown_timeout" });
        this.#write(
          run,
          "nack",
          () => backend.nack(ref),
          () => this.events.emit("job:nacked", { job }),
        );
        return;
    }
  }

  #metrics(run: Running, status: JobEndStatus, extra?: { error?: string; reason?: DeadLetterReason }): void {
    const m = this.rt.metrics;
    if (!m.active) return;
    const { job } = run;
    m.jobEnd({
      jobId: job.id,
      jobName: job.jobName,
      queue: job.queue,
      attempt: job.attempts,
      status,
      durationMs: performance.now() - run.startedAt,
      ...extra,
    });
  }

  #write(run: Running, op: string, write: () => Promise<boolean>, onApplied: () => void): void {
    this.#writes++;
    call(write).then(
      (applied) => {
        this.#writes--;
        if (applied) onApplied();
        else {
          this.rt.logger.debug(
            { jobId: run.job.id, op },
            "write ignored: the job is no longer processing under this attempt (cancelled or recovered)",
          );
        }
        this.onSettled();
      },
      (err: unknown) => {
        this.#writes--;
        this.#failed([run], err, op);
        this.onSettled();
      },
    );
  }

  #completed(runs: Running[]): void {
    if (!this.events.hasListeners("job:done")) return;
    for (const run of runs) {
      this.events.emit("job:done", { job: run.job, result: run.result, durationMs: run.durationMs });
    }
  }

  #deadLettered(runs: Running[], moved: string[]): void {
    if (!this.events.hasListeners("job:dead_letter")) return;
    const ids = new Set(moved);
    for (const run of runs) {
      const outcome = run.deadLetter;
      if (!outcome || !ids.has(run.job.id)) continue;
      this.events.emit("job:dead_letter", { job: run.job, reason: outcome.reason, error: outcome.error });
    }
  }

  #failed(runs: Running[], error: unknown, op: string): void {
    const jobIds = runs.map((r) => r.job.id);
    this.rt.logger.error(
      { err: error, op, jobIds, workerId: this.workerId },
      "state write failed; the jobs stay processing until stale-worker recovery requeues them",
    );
    this.rt.metrics.event("write_failed", { op, jobIds });
    this.events.emit("error", { error, during: op });
  }
}
