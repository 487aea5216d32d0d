/**
 * The worker loop. States: idle -> starting -> running -> stopping -> stopped (and idle -> once -> idle
 * for `runOnce`). A worker is not restartable; make a new one.
 *
 * running: claim a batch into the local buffer whenever free capacity (free slots + buffer room) reaches
 *   half a batch; start buffered jobs while slots are free. A claim that returns less than it asked for
 *   means the queue is drained: wait for a wake-up (backend notification, local enqueue) or the jittered
 *   poll timer. Each finished job becomes one backend write; completions are batched.
 * stopping: stop claiming, give back buffered jobs (attempt refunded), wait for running handlers up to
 *   `shutdownTimeoutMs`, then abort their signals and nack them (attempts preserved), wait for every
 *   pending write, stop upkeep, release the maintenance lease and mark the worker row stopped.
 *
 * A handler that ignores its aborted signal keeps running in the background, but its slot is freed and
 * its late result is ignored (the row was already written or given back).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { CompletionBatcher } from "./completion-batcher.js";
import { SoniqError } from "./errors.js";
import { TypedEmitter } from "./events.js";
import { executeJob, failureOutcome, JobAbortedError, type Outcome, Running } from "./job-runner.js";
import type { JobEndStatus } from "./metrics.js";
import type { ResolvedWorkerOptions } from "./options.js";
import type { LocalWorker, Runtime } from "./runtime.js";
import type { DeadLetterReason } from "./schema/constants.js";
import type { Job } from "./types.js";
import { SONIQ_VERSION } from "./version.js";
import { WorkerUpkeep } from "./worker-upkeep.js";

export interface WorkerEvents {
  "job:start": { job: Job };
  "job:done": { job: Job; result: unknown; durationMs: number };
  "job:failed": { job: Job; error: string; delayMs: number };
  "job:dead_letter": { job: Job; reason: DeadLetterReason; error: string };
  "job:snoozed": { job: Job; delayMs: number };
  "job:cancelled": { job: Job; why: "cancelled" | "lost" };
  "job:nacked": { job: Job };
  /** Something failed that the worker survived (a claim, a state write, a heartbeat...). */
  error: { error: unknown; during: string };
  /** A peer declared this worker stale; it re-registered. */
  "worker:stale": { workerId: string };
  stopped: { workerId: string };
}

/** `last_error` of a job claimed but never started when its worker stopped ("SNOOZE: ..."). */
const RELEASED = "released unstarted at worker shutdown";

type State = "idle" | "starting" | "running" | "once" | "stopping" | "stopped";

export class Worker implements LocalWorker, AsyncDisposable {
  readonly id: string = randomUUID();
  readonly options: ResolvedWorkerOptions;
  readonly #rt: Runtime;
  readonly #events: TypedEmitter<WorkerEvents>;
  readonly #batcher: CompletionBatcher<Running>;
  readonly #upkeep: WorkerUpkeep;
  #state: State = "idle";
  #buffer: Job[] = [];
  readonly #inFlight = new Map<string, Running>();
  #claiming: Promise<void> | null = null;
  #idle = false;
  #wakePending = false;
  #claimErrors = 0;
  #pollTimer: NodeJS.Timeout | undefined;
  #timeoutTimer: NodeJS.Timeout | undefined;
  #timeoutAt = Number.POSITIVE_INFINITY;
  #writes = 0;
  #waiters: { ready: () => boolean; resolve: () => void }[] = [];
  #unsubscribe: (() => Promise<void>) | null = null;
  #starting: Promise<void> | null = null;
  #stopping: Promise<void> | null = null;
  #workerIdForJobs: string | null = null;

  constructor(rt: Runtime, options: ResolvedWorkerOptions) {
    this.#rt = rt;
    this.options = options;
    this.#events = new TypedEmitter((event, err) =>
      rt.logger.warn({ err, event, workerId: this.id }, "worker event listener failed; ignoring"),
    );
    this.#batcher = new CompletionBatcher<Running>(
      rt.backend,
      options.completeBatchSize,
      (runs) => this.#completed(runs),
      (runs, err) => this.#writeFailed(runs, err, "complete"),
      () => this.#check(),
      () => this.#state !== "once",
    );
    this.#upkeep = new WorkerUpkeep({
      rt,
      workerId: this.id,
      options,
      registration: () => this.#registration(),
      inFlight: () => this.#inFlight.values(),
      abandon: (run, why) => this.#abandon(run, why),
      nudge: () => this.nudge(),
      emit: (event, payload) => this.#events.emit(event, payload),
    });
  }

  get state(): State {
    return this.#state;
  }

  /** Jobs running now. */
  get running(): number {
    return this.#inFlight.size;
  }

  on<K extends keyof WorkerEvents>(event: K, listener: (payload: WorkerEvents[K]) => void): () => void {
    return this.#events.on(event, listener);
  }

  off<K extends keyof WorkerEvents>(event: K, listener: (payload: WorkerEvents[K]) => void): void {
    this.#events.off(event, listener);
  }

  /** Registers the worker, subscribes to wake-ups and starts claiming. */
  start(): Promise<void> {
    if (this.#state !== "idle") {
      return Promise.reject(
        new SoniqError(
          "SONIQ_INVALID_STATE",
          `Cannot start a worker that is ${this.#state}; create a new worker.`,
          {
            context: { workerId: this.id, state: this.#state },
          },
        ),
      );
    }
    this.#state = "starting";
    this.#starting = this.#boot();
    return this.#starting;
  }

  async #boot(): Promise<void> {
    const { backend, logger } = this.#rt;
    this.#rt.workers.add(this);
    try {
      await backend.registerWorker(this.#registration());
    } catch (err) {
      this.#state = "stopped";
      this.#rt.workers.delete(this);
      throw err;
    }
    this.#workerIdForJobs = this.id;
    backend.registerTaskNames(this.id, [...this.#rt.registry.keys()]).catch((err: unknown) => {
      logger.warn({ err, workerId: this.id }, "could not record task names (observability only)");
    });
    try {
      const queues = this.options.queues;
      this.#unsubscribe = await backend.subscribe((queue) => {
        if (queues === null || queues.includes(queue)) this.nudge();
      });
    } catch (err) {
      logger.warn({ err, workerId: this.id }, "could not subscribe to wake-ups; polling only");
    }
    if (this.#state !== "starting") return; // stop() was called meanwhile
    this.#state = "running";
    this.#upkeep.start();
    logger.info(
      { workerId: this.id, queues: this.options.queues, concurrency: this.options.concurrency },
      "worker started",
    );
    this.#pump();
  }

  /** Graceful stop (see the file comment). Memoised; resolves when everything is given back or written. */
  stop(): Promise<void> {
    if (this.#state === "idle") {
      this.#state = "stopped";
      return Promise.resolve();
    }
    if (!this.#stopping) {
      // Synchronously: from here no buffered job starts and no claim is issued, even before the first await.
      if (this.#state === "running") this.#state = "stopping";
      this.#stopping = this.#shutdown();
    }
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /**
   * Claims and runs what is due now, up to `maxJobs` (default: no limit), and returns how many jobs it
   * ran once every outcome is written. Jobs that become due meanwhile (e.g. a retry with no delay) are
   * run too. No worker row, heartbeat or subscription: for scripts and tests.
   */
  async runOnce(options: { maxJobs?: number } = {}): Promise<number> {
    const max = options.maxJobs ?? Number.POSITIVE_INFINITY;
    if (!(max >= 0) || (Number.isFinite(max) && !Number.isSafeInteger(max))) {
      throw new SoniqError("SONIQ_INVALID_ARGUMENT", `maxJobs must be an integer >= 0 (got ${String(max)}).`);
    }
    if (this.#state !== "idle") {
      throw new SoniqError(
        "SONIQ_INVALID_STATE",
        `runOnce() needs a worker that is not started (it is ${this.#state}).`,
      );
    }
    this.#state = "once";
    this.#rt.workers.add(this);
    let processed = 0;
    try {
      while (processed < max) {
        const limit = Math.min(this.options.concurrency, max - processed);
        const jobs = await this.#rt.backend.claim({ queues: this.options.queues, limit, workerId: null });
        if (jobs.length === 0) break;
        processed += jobs.length;
        this.#buffer.push(...jobs);
        this.#pump();
        await this.#waitFor(() => this.#quiet());
      }
    } finally {
      clearTimeout(this.#timeoutTimer);
      this.#timeoutTimer = undefined;
      this.#timeoutAt = Number.POSITIVE_INFINITY;
      this.#rt.workers.delete(this);
      if (this.#state === "once") this.#state = "idle";
    }
    return processed;
  }

  /** A job became available: claim now instead of waiting for the poll timer. */
  nudge(): void {
    if (this.#state !== "running") return;
    if (this.#claiming) {
      this.#wakePending = true;
      return;
    }
    if (this.#idle) {
      this.#idle = false;
      clearTimeout(this.#pollTimer);
      this.#pollTimer = undefined;
    }
    this.#pump();
  }

  /** Called by the instance after `cancelJob` succeeded: abort the run here, if it is here. */
  cancelLocal(jobId: string): void {
    const buffered = this.#buffer.findIndex((j) => j.id === jobId);
    if (buffered >= 0) this.#buffer.splice(buffered, 1);
    const run = this.#inFlight.get(jobId);
    if (run) this.#abandon(run, "cancelled");
  }

  #registration() {
    return {
      id: this.id,
      hostname: hostname(),
      pid: process.pid,
      queues: this.options.queues ?? [],
      concurrency: this.options.concurrency,
      version: SONIQ_VERSION,
      metadata: this.options.metadata,
    };
  }

  #pump(): void {
    if (this.#state !== "running" && this.#state !== "once") return;
    const c = this.options.concurrency;
    while (this.#inFlight.size < c && this.#buffer.length > 0) this.#start(this.#buffer.shift() as Job);
    if (this.#state !== "running" || this.#claiming || this.#idle) return;
    const want = c - this.#inFlight.size + this.options.batchSize - this.#buffer.length;
    if (want >= Math.ceil(this.options.batchSize / 2)) this.#claiming = this.#claim(want);
  }

  async #claim(limit: number): Promise<void> {
    this.#wakePending = false;
    const { backend, logger, metrics } = this.#rt;
    const t0 = performance.now();
    let jobs: Job[] = [];
    let failed = false;
    try {
      jobs = await backend.claim({ queues: this.options.queues, limit, workerId: this.id });
      this.#claimErrors = 0;
    } catch (error) {
      failed = true;
      this.#claimErrors++;
      logger.error({ err: error, workerId: this.id }, "claim failed; retrying after a back-off");
      this.#events.emit("error", { error, during: "claim" });
    }
    this.#claiming = null;
    if (metrics.active) metrics.claim(jobs.length, performance.now() - t0);
    for (const job of jobs) this.#buffer.push(job);
    if (this.#state !== "running") return; // stopping: stop() gives the buffer back
    if (failed || jobs.length < limit) {
      if (this.#wakePending && !failed) this.#wakePending = false;
      else {
        this.#idle = true;
        this.#schedulePoll();
      }
    }
    this.#pump();
  }

  #schedulePoll(): void {
    if (this.#pollTimer) return;
    const backoff = this.#claimErrors > 0 ? Math.min(2 ** (this.#claimErrors - 1), 30) : 1;
    const delay = this.options.pollIntervalMs * backoff * (0.8 + Math.random() * 0.4);
    this.#pollTimer = setTimeout(() => {
      this.#pollTimer = undefined;
      this.#idle = false;
      this.#pump();
    }, delay);
    this.#pollTimer.unref();
  }

  #start(job: Job): void {
    const rt = this.#rt;
    const def = rt.registry.get(job.jobName);
    const run = new Running(job, def, this.#workerIdForJobs, rt);
    this.#inFlight.set(job.id, run);
    if (rt.metrics.active) {
      rt.metrics.jobStart({ jobId: job.id, jobName: job.jobName, queue: job.queue, attempt: job.attempts });
    }
    this.#events.emit("job:start", { job });
    const timeoutMs = def?.options.timeoutMs ?? 0;
    if (timeoutMs > 0) {
      run.deadline = Date.now() + timeoutMs;
      if (run.deadline < this.#timeoutAt) this.#armTimeouts(run.deadline);
    }
    void this.#run(run);
  }

  /** Runs the job and records its outcome (an async method: no per-job callback closures). */
  async #run(run: Running): Promise<void> {
    let outcome: Outcome | null;
    try {
      outcome = await executeJob(this.#rt, run);
    } catch (err) {
      this.#rt.logger.error(
        { err, jobId: run.job.id },
        "job runner failed unexpectedly; counting a failed attempt",
      );
      // Settled already: by the runner before it failed (record it here), or by a timeout, cancel or
      // shutdown, which record it themselves (takenOver).
      if (!run.settle() && run.takenOver) return;
      outcome = await failureOutcome(this.#rt, run, err);
    }
    if (outcome) this.#record(run, outcome);
  }

  /** One timer for all deadlines, armed for the earliest: no per-job timer on the hot path. */
  #armTimeouts(at: number): void {
    clearTimeout(this.#timeoutTimer);
    this.#timeoutAt = at;
    this.#timeoutTimer = setTimeout(() => this.#sweepTimeouts(), Math.max(0, at - Date.now()));
    // runOnce() promises to return, so there the timer keeps the process alive (and is cleared at the end).
    if (this.#state !== "once") this.#timeoutTimer.unref();
  }

  #sweepTimeouts(): void {
    this.#timeoutTimer = undefined;
    this.#timeoutAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const run of this.#inFlight.values()) {
      if (run.deadline === 0 || run.settled) continue;
      if (run.deadline <= now) this.#timeOut(run);
      else if (run.deadline < next) next = run.deadline;
    }
    if (next < Number.POSITIVE_INFINITY) this.#armTimeouts(next);
  }

  #timeOut(run: Running): void {
    if (!run.settle()) return;
    run.takenOver = true;
    const ms = run.def?.options.timeoutMs ?? 0;
    const err = new JobAbortedError("timeout", `Job "${run.job.jobName}" timed out after ${ms} ms`);
    err.stack = `${err.name}: ${err.message}`;
    run.abort(err);
    failureOutcome(this.#rt, run, err).then((o) => this.#record(run, o));
  }

  #abandon(run: Running, why: "cancelled" | "lost" | "shutdown"): void {
    if (!run.settle()) return;
    run.takenOver = true;
    const message =
      why === "cancelled"
        ? "The job was cancelled"
        : why === "lost"
          ? "The job is no longer held by this worker (recovered as stale)"
          : "The worker is shutting down";
    run.abort(new JobAbortedError(why, message));
    this.#record(run, why === "shutdown" ? { kind: "nack" } : { kind: "abandoned", why });
  }

  #endMetrics(
    run: Running,
    status: JobEndStatus,
    extra?: { error?: string; reason?: DeadLetterReason },
  ): void {
    const m = this.#rt.metrics;
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

  #record(run: Running, outcome: Outcome): void {
    this.#inFlight.delete(run.job.id);
    const { backend } = this.#rt;
    const { job } = run;
    switch (outcome.kind) {
      case "done": {
        run.result = outcome.result;
        run.durationMs = performance.now() - run.startedAt;
        this.#endMetrics(run, "done");
        const ttl = run.def?.options.resultTtlMs ?? this.#rt.options.resultTtlMs;
        this.#batcher.add(
          { id: job.id, attempt: job.attempts, result: outcome.result, resultTtlMs: ttl },
          run,
        );
        break;
      }
      case "retry":
        this.#endMetrics(run, "failed", { error: outcome.error });
        this.#write(
          run,
          "retry",
          backend.retry(
            { id: job.id, attempt: job.attempts },
            { error: outcome.error, delayMs: outcome.delayMs },
          ),
          () => this.#events.emit("job:failed", { job, error: outcome.error, delayMs: outcome.delayMs }),
        );
        break;
      case "dead_letter": {
        const { reason, error } = outcome;
        this.#endMetrics(run, "dead_letter", { error, reason });
        const moved = backend.markJobDeadLetter(job.id, { reason, error, attempt: job.attempts });
        this.#write(run, "markJobDeadLetter", moved, () =>
          this.#events.emit("job:dead_letter", { job, reason, error }),
        );
        break;
      }
      case "snooze":
        this.#endMetrics(run, "snoozed");
        this.#write(
          run,
          "reschedule",
          backend.reschedule(
            { id: job.id, attempt: job.attempts },
            { delayMs: outcome.delayMs, reason: outcome.reason },
          ),
          () => this.#events.emit("job:snoozed", { job, delayMs: outcome.delayMs }),
        );
        break;
      case "abandoned":
        this.#endMetrics(run, "cancelled");
        this.#rt.logger.info(
          { jobId: job.id, why: outcome.why },
          "job abandoned; its late result will be ignored",
        );
        this.#events.emit("job:cancelled", { job, why: outcome.why });
        break;
      case "nack":
        this.#endMetrics(run, "nacked");
        this.#rt.logger.warn({ jobId: job.id, reason: "shutdown_timeout" }, "shutdown_nack");
        this.#rt.metrics.event("shutdown_nack", { jobId: job.id, reason: "shutdown_timeout" });
        this.#write(run, "nack", backend.nack({ id: job.id, attempt: job.attempts }), () =>
          this.#events.emit("job:nacked", { job }),
        );
        break;
    }
    this.#pump();
    this.#check();
  }

  #write(run: Running, op: string, write: Promise<boolean>, onApplied: () => void): void {
    this.#writes++;
    write.then(
      (applied) => {
        this.#writes--;
        if (applied) onApplied();
        else {
          this.#rt.logger.debug(
            { jobId: run.job.id, op },
            "write ignored: the job is no longer processing under this attempt (cancelled or recovered)",
          );
        }
        this.#check();
      },
      (err: unknown) => {
        this.#writes--;
        this.#writeFailed([run], err, op);
        this.#check();
      },
    );
  }

  #completed(runs: Running[]): void {
    if (!this.#events.hasListeners("job:done")) return;
    for (const run of runs) {
      this.#events.emit("job:done", { job: run.job, result: run.result, durationMs: run.durationMs });
    }
  }

  #writeFailed(runs: Running[], error: unknown, op: string): void {
    const jobIds = runs.map((r) => r.job.id);
    this.#rt.logger.error(
      { err: error, op, jobIds, workerId: this.id },
      "state write failed; the jobs stay processing until stale-worker recovery requeues them",
    );
    this.#rt.metrics.event("write_failed", { op, jobIds });
    this.#events.emit("error", { error, during: op });
  }

  /** No job buffered or running and no write pending. */
  #quiet(): boolean {
    return (
      this.#inFlight.size === 0 && this.#buffer.length === 0 && this.#writes === 0 && !this.#batcher.busy
    );
  }

  #waitFor(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ ready, resolve }));
  }

  #check(): void {
    if (this.#waiters.length === 0) return;
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.ready()) return true;
      w.resolve();
      return false;
    });
  }

  async #shutdown(): Promise<void> {
    const { backend, logger } = this.#rt;
    if (this.#starting) await this.#starting.catch(() => {});
    if (this.#state === "stopped") return;
    this.#state = "stopping";
    clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    if (this.#unsubscribe)
      await this.#unsubscribe().catch((err: unknown) => logger.warn({ err }, "unsubscribe failed"));
    if (this.#claiming) await this.#claiming;
    const unstarted = this.#buffer.splice(0);
    await Promise.all(
      unstarted.map((job) =>
        // Not nack: the claim counted an attempt that never ran. reschedule gives it back (attempts - 1)
        // so a job with maxAttempts 1 is not dead-lettered by its next claim.
        backend
          .reschedule({ id: job.id, attempt: job.attempts }, { delayMs: 0, reason: RELEASED })
          .catch((error: unknown) => {
            logger.error(
              { err: error, jobId: job.id },
              "could not give back an unstarted job; stale recovery will",
            );
            this.#events.emit("error", { error, during: "nack" });
          }),
      ),
    );
    await this.#drainInFlight();
    this.#batcher.flush();
    await this.#waitFor(() => this.#quiet());
    clearTimeout(this.#timeoutTimer);
    await this.#upkeep.stop();
    await backend.stopWorker(this.id).catch((error: unknown) => {
      logger.warn({ err: error, workerId: this.id }, "could not mark the worker stopped");
    });
    this.#state = "stopped";
    this.#rt.workers.delete(this);
    logger.info({ workerId: this.id }, "worker stopped");
    this.#events.emit("stopped", { workerId: this.id });
  }

  async #drainInFlight(): Promise<void> {
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.shutdownTimeoutMs);
      timer.unref();
    });
    await Promise.race([this.#waitFor(() => this.#inFlight.size === 0), timedOut]);
    clearTimeout(timer);
    for (const run of [...this.#inFlight.values()]) this.#abandon(run, "shutdown");
  }
}
