/**
 * The worker loop. States: idle -> starting -> running -> stopping -> stopped (and idle -> once -> idle
 * for `runOnce`). A worker is not restartable; make a new one.
 *
 * running: claim into the local buffer whenever free capacity (free slots + window - buffered) reaches
 *   half the claim window; start buffered jobs while slots are free. The window adapts (claim-pacing.ts).
 *   Limited queues (concurrency, group concurrency, rate limit) give a claim no more than the free slots
 *   not already covered by the buffer (`limitedMax`): a claimed job counts as processing, so one parked in
 *   the buffer would hold capacity another worker could use. A claim that returns less than it asked for
 *   means the queue is drained: wait for a wake-up (backend notification, local enqueue) or the jittered
 *   poll timer; unless the backend says a limit held due jobs back (`capped`): then claim again once this
 *   worker frees capacity or the rate window opens (the claim gate, claim-pacing.ts). Jobs the claim took
 *   past their attempts are dead-lettered unrun (claim.ts). Every outcome becomes one settlement, batched
 *   into `runs.settle` (`OutcomeWriter`).
 * once: `runOnce` runs one stale-recovery pass, then claims up to `concurrency` at a time and waits for each
 *   batch's writes; registered and heartbeating, without subscription or maintenance. Every job it claims
 *   carries its worker id, so a run whose process dies is recovered like any worker's (by the next runOnce
 *   too, once it is stale); at the end it retries the give-back of jobs whose writes failed, then marks the
 *   row stopped (recovery requeues what is still unwritten).
 * stopping: stop claiming, give back buffered jobs (attempt refunded), wait for running handlers up to
 *   `shutdownTimeoutMs`, then abort their signals and nack them (attempts preserved), wait for every
 *   pending write, stop upkeep, release the maintenance lease, retry failed give-backs once and mark the
 *   worker row stopped.
 *
 * The running jobs themselves (deadlines, takeovers, their one outcome) are in-flight.ts.
 */

import { randomUUID } from "node:crypto";
import type { LocalWorker, Runtime } from "../app/runtime.js";
import type { ClockTimer } from "../common/clock.js";
import { SoniqError } from "../common/errors.js";
import { TypedEmitter } from "../common/typed-emitter.js";
import type { Job } from "../common/types.js";
import type { ClaimCap } from "../contract/index.js";
import { ProgressBuffer } from "../jobs/progress.js";
import { claimJobs } from "./claim.js";
import { ClaimGate, nextClaimWindow } from "./claim-pacing.js";
import type { WorkerEvents } from "./events.js";
import { InFlight } from "./in-flight.js";
import { JobBuffer } from "./job-buffer.js";
import { MetricsRecorder } from "./metrics-recorder.js";
import type { ResolvedWorkerOptions } from "./options.js";
import { OutcomeWriter } from "./outcome-writer.js";
import { besideRegistration, maxJobsOf, recordTaskNames, workerRegistration } from "./setup.js";
import { markStopped, waitAtMost } from "./shutdown.js";
import { WorkerUpkeep } from "./upkeep.js";
import { Waiters } from "./waiters.js";
import { WebhookDeliverer } from "./webhook-deliverer.js";

export type { WorkerEvents } from "./events.js";

export type WorkerState = "idle" | "starting" | "running" | "once" | "stopping" | "stopped";

/** How far ahead a job this worker put back is worth a timer of its own (later ones wait for the poll). */
const MAX_WAKE_HINT_MS = 60_000;
/** The most later wake times a worker keeps beside its timer's. */
const MAX_PENDING_WAKES = 10_000;

export class Worker implements LocalWorker, AsyncDisposable {
  readonly id: string = randomUUID();
  readonly options: ResolvedWorkerOptions;
  readonly #rt: Runtime;
  readonly #events: TypedEmitter<WorkerEvents>;
  readonly #writer: OutcomeWriter;
  readonly #upkeep: WorkerUpkeep;
  readonly #deliverer: WebhookDeliverer;
  readonly #recorder: MetricsRecorder;
  #state: WorkerState = "idle";
  readonly #buffer = new JobBuffer();
  /** Current claim window (see claim-pacing.ts): starts at `batchSize`, grows up to `maxBatchSize`. */
  #window: number;
  readonly #inFlight: InFlight;
  #claiming: Promise<void> | null = null;
  /** Claims started so far (the orphan check skips a read that a claim overlapped: upkeep.ts). */
  #claimsStarted = 0;
  #claimErrors = 0;
  readonly #gate: ClaimGate;
  /** A claim deferred to the end of this event-loop turn (while capped, see `#pump`). */
  #soon: NodeJS.Immediate | undefined;
  /** The one ref'd handle: a started worker holds the process open until `stop()` (see `#boot`). */
  #keepAlive: NodeJS.Timeout | undefined;
  readonly #waiters = new Waiters();
  /** `ctx.progress()` values waiting for the next heartbeat (see progress.ts). */
  readonly #progress = new ProgressBuffer();
  /** Drops the wake-up subscription (made beside the registration, see setup.ts). */
  #unsubscribe: (() => Promise<void>) | null = null;
  #starting: Promise<void> | null = null;
  #stopping: Promise<void> | null = null;
  #workerIdForJobs: string | null = null;

  constructor(rt: Runtime, options: ResolvedWorkerOptions) {
    this.#rt = rt;
    this.options = options;
    this.#window = options.batchSize;
    this.#gate = new ClaimGate(options.pollIntervalMs, () => this.#pump());
    this.#events = new TypedEmitter((event, err) =>
      rt.logger.warn({ err, event, workerId: this.id }, "worker event listener failed; ignoring"),
    );
    // runOnce() promises to return, so there the flush and deadline timers keep the process alive.
    const unref = () => this.#state !== "once";
    this.#writer = new OutcomeWriter(
      rt,
      this.#events,
      this.id,
      options.completeBatchSize,
      () => this.#freed(),
      unref,
    );
    this.#writer.newerVersionDelayMs = options.newerVersionDelayMs;
    // A job this worker put back due soon (a sleep, a snooze, a give-back) is claimed again when it falls due,
    // not at the next poll: one timer, at the earliest such time.
    this.#events.on("job:snoozed", ({ delayMs }) => this.#wakeIn(delayMs));
    this.#inFlight = new InFlight(rt, this.#events, this.#writer, () => this.#freed(), unref, this.#progress);
    this.#recorder = new MetricsRecorder(rt, this.#events);
    this.#upkeep = new WorkerUpkeep({
      rt,
      workerId: this.id,
      options,
      registration: () => this.#registration(),
      inFlight: () => this.#inFlight.values(),
      abandon: (run, why) => this.#inFlight.abandon(run, why),
      nudge: () => this.nudge(),
      giveBackStranded: () => this.#writer.giveBackStranded(),
      claimEpoch: () => (this.#state === "running" && !this.#claiming ? this.#claimsStarted : null),
      holds: (jobId) => this.#writer.holds(jobId),
      progress: this.#progress,
      emit: (event, payload) => this.#events.emit(event, payload),
    });
    this.#deliverer = new WebhookDeliverer(rt, options.deliverWebhooks, options.pollIntervalMs);
  }

  get state(): WorkerState {
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
          { context: { workerId: this.id, state: this.#state } },
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
    const beside = besideRegistration(this.#rt, this.id, this.options.queues, () => this.nudge());
    try {
      await backend.workers.register(this.#registration());
    } catch (err) {
      this.#state = "stopped";
      this.#rt.workers.delete(this);
      await beside.undo();
      throw err;
    }
    this.#workerIdForJobs = this.id;
    void recordTaskNames(this.#rt, this.id);
    this.#unsubscribe = beside.unsubscribe;
    const endpointsError = await beside.endpointsRead;
    if (endpointsError) throw endpointsError.err;
    if (this.#state !== "starting") return; // stop() was called meanwhile
    this.#state = "running";
    // A started worker is what a worker-only process exists for, so it keeps the event loop alive (on every
    // backend, not only where a LISTEN socket happens to) until stop(). Every other timer stays unref'd.
    this.#keepAlive = setInterval(() => {}, 2 ** 31 - 1);
    this.#upkeep.start();
    this.#recorder.start();
    this.#deliverer.start();
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
   * run too. Then, unless `deliverWebhooks` is false, it sends the webhook deliveries due (its jobs' events
   * included). For scripts, tests and cron/serverless deployments: no subscription and no maintenance, but it
   * first runs one stale-recovery pass (with this worker's `staleAfterMs`), and the worker registers and
   * heartbeats while it runs, so if the process dies mid-run its jobs are recovered like any worker's: by a
   * started worker's maintenance, or by the next `runOnce` anywhere once they are stale.
   * A worker can run `runOnce` again; `stop()` ends it after the current batch.
   */
  async runOnce(options: { maxJobs?: number } = {}): Promise<number> {
    const max = maxJobsOf(options);
    if (this.#state !== "idle") {
      throw new SoniqError(
        "SONIQ_INVALID_STATE",
        `runOnce() needs a worker that is not started (it is ${this.#state}).`,
      );
    }
    this.#state = "once";
    try {
      await this.#rt.backend.workers.register(this.#registration());
    } catch (err) {
      this.#state = "idle";
      throw err;
    }
    this.#workerIdForJobs = this.id;
    this.#rt.workers.add(this);
    this.#upkeep.start(false);
    let processed = 0;
    try {
      await recordTaskNames(this.#rt, this.id);
      await this.#upkeep.recoverOnce();
      await this.#rt.webhooks.refresh();
      while (processed < max && this.#state === "once") {
        const limit = Math.min(this.options.concurrency, max - processed);
        const { taken, runnable } = await claimJobs(this.#rt, this.#writer, {
          queues: this.options.queues,
          limit,
          workerId: this.id,
        });
        if (taken === 0) break;
        processed += runnable.length;
        this.#buffer.push(runnable);
        this.#pump();
        await this.#waiters.wait(() => this.#quiet());
      }
      if (this.#state === "once") await this.#deliverer.deliverNow();
    } finally {
      this.#inFlight.clearDeadlines();
      await this.#upkeep.stop();
      await this.#recorder.stop();
      await this.#writer.lastGiveBack();
      await markStopped(this.#rt, this.id);
      this.#rt.workers.delete(this);
      if (this.#state === "once") this.#state = "idle";
    }
    return processed;
  }

  #wakeTimer: ClockTimer | undefined;
  #wakeAt = Number.POSITIVE_INFINITY;
  /** The later wake times, soonest first: each gets its own nudge once the one before it fired. */
  #wakes: number[] = [];

  /**
   * Nudges the worker in `delayMs` (within `MAX_WAKE_HINT_MS`): the jobs it suspended or snoozed are claimed when
   * they come due, not at the next poll. One timer runs, for the soonest; later times wait in `#wakes` (at most
   * `MAX_PENDING_WAKES`, the latest dropped first: the poll still finds those).
   */
  #wakeIn(delayMs: number): void {
    if (this.#state !== "running" || delayMs > MAX_WAKE_HINT_MS) return;
    const at = this.#rt.options.clock.now() + delayMs;
    if (at >= this.#wakeAt) {
      this.#pendWake(at);
      return;
    }
    if (this.#wakeAt !== Number.POSITIVE_INFINITY) this.#pendWake(this.#wakeAt);
    this.#armWake(at);
  }

  #pendWake(at: number): void {
    const wakes = this.#wakes;
    let lo = 0;
    let hi = wakes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((wakes[mid] as number) <= at) lo = mid + 1;
      else hi = mid;
    }
    if (wakes[lo - 1] === at) return;
    wakes.splice(lo, 0, at);
    if (wakes.length > MAX_PENDING_WAKES) wakes.pop();
  }

  #armWake(at: number): void {
    const clock = this.#rt.options.clock;
    this.#wakeTimer?.cancel();
    this.#wakeAt = at;
    this.#wakeTimer = clock.setTimer(
      () => {
        this.#wakeAt = Number.POSITIVE_INFINITY;
        this.#wakeTimer = undefined;
        this.nudge();
        // The next time still ahead (the ones passed meanwhile are due now: this nudge's claim finds them).
        const now = clock.now();
        const wakes = this.#wakes;
        let passed = 0;
        while (passed < wakes.length && (wakes[passed] as number) <= now) passed++;
        wakes.splice(0, passed);
        const next = wakes.shift();
        if (next !== undefined && this.#state === "running") this.#armWake(next);
      },
      // Timers may fire a little before the wall clock reaches their time: 2 ms late is never early.
      Math.max(0, at - clock.now()) + 2,
    );
  }

  /** A job became available: claim now instead of waiting for the poll timer. */
  nudge(): void {
    if (this.#state !== "running") return;
    this.#gate.wake(this.#claiming !== null);
    if (!this.#claiming) this.#pump();
  }

  /** A job finished or an outcome was written: refill the slots, maybe claim, re-check the waiters. */
  #freed(): void {
    this.#gate.freed();
    this.#pump();
    this.#waiters.check();
  }

  /** Called by the instance after `jobs.cancel` succeeded: abort the run here, if it is here. */
  cancelLocal(jobId: string): void {
    if (this.#buffer.remove(jobId)) this.#writer.dropped(jobId);
    const run = this.#inFlight.get(jobId);
    if (run) this.#inFlight.abandon(run, "cancelled");
  }

  #registration() {
    return workerRegistration(this.id, this.options);
  }

  #pump(deferred = false): void {
    if (this.#state !== "running" && this.#state !== "once") return;
    const c = this.options.concurrency;
    while (this.#inFlight.size < c) {
      const job = this.#buffer.take();
      if (!job) break;
      this.#inFlight.start(job, this.#workerIdForJobs);
    }
    if (this.#state !== "running" || this.#claiming) return;
    const free = c - this.#inFlight.size;
    const limitedMax = Math.max(0, free - this.#buffer.size);
    if (!this.#gate.allows(limitedMax)) return;
    if (this.#gate.capped && !deferred) {
      // Each job that finishes frees a slot: the ones freed in this turn of the event loop share one claim.
      // Not unref'd: an unref'd immediate lets the loop block in its poll phase until other I/O or a timer
      // (a running worker holds the process open anyway, and stop() clears it).
      this.#soon ??= setImmediate(() => {
        this.#soon = undefined;
        this.#pump(true);
      });
      return;
    }
    const want = free + this.#window - this.#buffer.size;
    if (want >= Math.ceil(this.#window / 2)) this.#claiming = this.#claim(want, limitedMax);
  }

  /** One claim round trip; the window adapts to how fast jobs finish (see claim-pacing.ts). */
  async #claim(limit: number, limitedMax: number): Promise<void> {
    this.#claimsStarted++;
    this.#gate.claiming();
    if (this.#upkeep.orphansSuspected) await this.#upkeep.giveBackSuspected();
    const { logger, metrics } = this.#rt;
    const t0 = performance.now();
    const finishedBefore = this.#inFlight.finished;
    let taken = 0;
    let jobs: Job[] = [];
    let capped: ClaimCap | null = null;
    let failed = false;
    try {
      ({
        taken,
        runnable: jobs,
        capped,
      } = await claimJobs(this.#rt, this.#writer, {
        queues: this.options.queues,
        limit,
        workerId: this.id,
        limitedMax,
      }));
      this.#claimErrors = 0;
    } catch (error) {
      failed = true;
      this.#upkeep.suspectOrphans();
      this.#claimErrors++;
      logger.error({ err: error, workerId: this.id }, "claim failed; retrying after a back-off");
      this.#events.emit("error", { error, during: "claim" });
    }
    this.#claiming = null;
    if (metrics.active) metrics.claim(taken, performance.now() - t0);
    // Slots sat idle and jobs finished meanwhile: the jobs outpace the claims (not merely a first claim).
    const starved =
      this.#inFlight.finished > finishedBefore &&
      this.#inFlight.size < this.options.concurrency &&
      this.#buffer.size === 0;
    this.#buffer.push(jobs);
    if (this.#state !== "running") return; // stopping: stop() gives the buffer back
    const short = failed || taken < limit;
    this.#window = nextClaimWindow(this.#window, this.options, short && capped === null, starved);
    this.#gate.claimed(failed, short, capped, this.#claimErrors);
    this.#pump();
  }

  /** No job buffered or running and no write pending. */
  #quiet(): boolean {
    return this.#inFlight.size === 0 && this.#buffer.size === 0 && !this.#writer.busy;
  }

  async #shutdown(): Promise<void> {
    const { logger } = this.#rt;
    if (this.#starting) await this.#starting.catch(() => {});
    if (this.#state === "stopped") return;
    this.#state = "stopping";
    this.#gate.cancel();
    this.#wakeTimer?.cancel();
    this.#wakeAt = Number.POSITIVE_INFINITY;
    this.#wakes = [];
    clearImmediate(this.#soon);
    if (this.#unsubscribe) await this.#unsubscribe();
    if (this.#claiming) await this.#claiming;
    this.#writer.release(this.#buffer.drain());
    await this.#drainInFlight();
    this.#writer.flush();
    await this.#waiters.wait(() => this.#quiet());
    this.#inFlight.clearDeadlines();
    await this.#upkeep.stop();
    await this.#recorder.stop();
    await this.#deliverer.stop();
    await this.#writer.lastGiveBack();
    if (this.#workerIdForJobs !== null) await markStopped(this.#rt, this.id);
    this.#state = "stopped";
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    this.#rt.workers.delete(this);
    logger.info({ workerId: this.id }, "worker stopped");
    this.#events.emit("stopped", { workerId: this.id });
  }

  async #drainInFlight(): Promise<void> {
    if (this.#inFlight.size === 0) return;
    await waitAtMost(
      this.#waiters.wait(() => this.#inFlight.size === 0),
      this.options.shutdownTimeoutMs,
    );
    for (const run of [...this.#inFlight.values()]) this.#inFlight.abandon(run, "shutdown");
  }
}
