/**
 * A worker's background duties, each on its own unref'd interval:
 * - heartbeat every `heartbeatIntervalMs`. A false heartbeat means a peer declared this worker stale
 *   (and requeued its jobs): log it, re-register, and check every running job. Otherwise only jobs
 *   running longer than one heartbeat interval are checked (one `jobs.get` each), so short jobs cost
 *   nothing: a job found cancelled or no longer held by this run is aborted here and its late result
 *   ignored. This is how a `jobs.cancel` from another process reaches a running handler.
 * - maintenance every `maintenanceCadenceMs` (and once at start), only while holding the
 *   `soniq.maintenance` lease so one worker does it at a time: requeue jobs of stale peers, delete
 *   expired done rows, end webhook deliveries pending past `webhooks.pendingMaxAgeMs` and delete finished ones
 *   past `webhooks.retentionMs` (webhooks/outbox-upkeep.ts), write `flow.finished` for the flows finished since (webhooks/flow-finished.ts), and fire
 *   `queue.backlog` for queues past their `lagAlertMs`. `runOnce` has no maintenance duty; it runs the recovery step once (`recoverOnce`). The cadence follows `staleAfterMs` (at most half of it), and the lease lives at most
 *   `staleAfterMs`; besides, a peer takes the lease over as soon as the holder is stale or stopped by the
 *   peer's own `staleAfterMs` (`takeOver`), so a dead holder with a longer threshold than the peer's does not
 *   delay recovery: the peer recovers the holder's jobs within about its `staleAfterMs` plus one check.
 * - with each heartbeat (and once more at stop), the runs' latest `ctx.progress()` values in one
 *   `runs.reportProgress` write, only when some handler reported since the last one (progress.ts).
 * - at each maintenance tick, every worker reports the outbox's pending deliveries to a metrics sink that takes
 *   them (the lease holder counts them; the others report none: webhooks/outbox-upkeep.ts).
 * - at each maintenance tick, every worker (lease or not) reads the jobs processing under its id and gives back
 *   (queued now, attempt kept) those it does not hold: a claim whose result never reached it (the connection
 *   dropped after the commit) or an outcome a database crash or failover lost. Without this such a row would
 *   stay processing for as long as the worker lives, since recovery only reaches stale and stopped workers.
 *   After a failed claim (the likeliest loss of a claim's result), the worker does the same check at the start
 *   of its next claim instead of waiting up to a maintenance cadence.
 * - while the outcome writer holds stranded jobs (their outcome and their give-back both failed to be
 *   written), each heartbeat first retries the give-back and is withheld if that fails: the worker turns
 *   stale and recovery reaches those jobs although the process lives.
 */

import type { Runtime } from "../app/runtime.js";
import type { ProcessingJob, WorkerRegistration } from "../contract/index.js";
import type { ProgressBuffer } from "../jobs/progress.js";
import { METRICS_RETENTION_MS } from "../observability/series.js";
import { BacklogWatch } from "../webhooks/backlog.js";
import { sweepFinishedFlows } from "../webhooks/flow-finished.js";
import { reportPending, tidyOutbox } from "../webhooks/outbox-upkeep.js";
import type { WorkerEvents } from "./events.js";
import type { ResolvedWorkerOptions } from "./options.js";
import type { Running } from "./runner.js";
import { nackSettlement } from "./settlements.js";

export const MAINTENANCE_LEASE = "soniq.maintenance";

/** How often a worker runs maintenance: `maintenanceIntervalMs`, but at least twice per `staleAfterMs`. */
export function maintenanceCadenceMs(o: ResolvedWorkerOptions): number {
  return Math.max(1, Math.min(o.maintenanceIntervalMs, Math.floor(o.staleAfterMs / 2)));
}

/** The maintenance lease's TTL: outlives two missed checks, never `staleAfterMs`. */
export function maintenanceLeaseTtlMs(o: ResolvedWorkerOptions): number {
  const cadence = maintenanceCadenceMs(o);
  return Math.max(cadence + 1, Math.min(cadence * 2 + o.heartbeatIntervalMs, o.staleAfterMs));
}

export interface UpkeepHost {
  rt: Runtime;
  workerId: string;
  options: ResolvedWorkerOptions;
  registration(): WorkerRegistration;
  inFlight(): Iterable<Running>;
  abandon(run: Running, why: "cancelled" | "lost"): void;
  nudge(): void;
  /** Retries stranded give-backs; true when none remain (see outcome-writer.ts). */
  giveBackStranded(): Promise<boolean>;
  /** Claims started so far, or null while one is in flight or the worker is not running (no orphan check). */
  claimEpoch(): number | null;
  /** Whether the worker holds the job (claimed, its settlement not reported yet: held-jobs.ts). */
  holds(jobId: string): boolean;
  emit<K extends keyof WorkerEvents>(event: K, payload: WorkerEvents[K]): void;
  /** The runs' latest `ctx.progress()` values, written with each heartbeat and once more at stop. */
  progress: ProgressBuffer;
}

export class WorkerUpkeep {
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #maintenanceTimer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | null = null;
  #maintaining: Promise<void> | null = null;
  #holdsLease = false;
  /** A claim failed since the last orphan check: it may have committed with its result lost. */
  #orphansSuspected = false;
  readonly #backlog: BacklogWatch;

  constructor(private readonly host: UpkeepHost) {
    this.#backlog = new BacklogWatch(host.rt.backend, host.rt.webhooks);
  }

  /** Starts the heartbeat and, unless `maintenance` is false (runOnce), the maintenance duty. */
  start(maintenance = true): void {
    const { heartbeatIntervalMs } = this.host.options;
    this.#heartbeatTimer = setInterval(() => {
      this.#beating ??= this.#beat().finally(() => {
        this.#beating = null;
      });
    }, heartbeatIntervalMs);
    this.#heartbeatTimer.unref();
    if (!maintenance) return;
    const maintain = () => {
      this.#maintaining ??= this.#maintain().finally(() => {
        this.#maintaining = null;
      });
    };
    this.#maintenanceTimer = setInterval(maintain, maintenanceCadenceMs(this.host.options));
    this.#maintenanceTimer.unref();
    maintain();
  }

  async stop(): Promise<void> {
    clearInterval(this.#heartbeatTimer);
    clearInterval(this.#maintenanceTimer);
    await Promise.all([this.#beating, this.#maintaining]);
    await this.#writeProgress();
    if (this.#holdsLease) {
      this.#holdsLease = false;
      await this.host.rt.backend.leases
        .release(MAINTENANCE_LEASE, this.host.workerId)
        .catch((err: unknown) => {
          this.host.rt.logger.warn({ err }, "could not release the maintenance lease; it expires on its own");
        });
    }
  }

  #failed(error: unknown, during: string): void {
    this.host.rt.logger.warn({ err: error, workerId: this.host.workerId }, `${during} failed`);
    this.host.emit("error", { error, during });
  }

  async #beat(): Promise<void> {
    const { rt, workerId, options } = this.host;
    let alive: boolean;
    try {
      if (!(await this.host.giveBackStranded())) {
        rt.logger.error(
          { workerId },
          "heartbeat withheld: jobs whose outcome could not be written stay processing until recovery requeues them",
        );
        return;
      }
      alive = await rt.backend.workers.heartbeat(workerId, options.metadata);
    } catch (err) {
      this.#failed(err, "heartbeat");
      return;
    }
    await this.#writeProgress();
    if (!alive) {
      rt.logger.warn(
        { workerId },
        "this worker was declared stale by a peer (its jobs were requeued); re-registering",
      );
      rt.metrics.event("worker_stale", { workerId });
      this.host.emit("worker:stale", { workerId });
      try {
        await rt.backend.workers.register(this.host.registration());
      } catch (err) {
        this.#failed(err, "re-register");
      }
    }
    await this.#checkRunning(
      alive ? performance.now() - options.heartbeatIntervalMs : Number.POSITIVE_INFINITY,
    );
  }

  /** One write for every run's latest progress; a failed write keeps the values for the next beat. */
  async #writeProgress(): Promise<void> {
    const { progress, rt, workerId } = this.host;
    if (progress.size === 0) return;
    const updates = progress.drain();
    try {
      await rt.backend.runs.reportProgress(updates, workerId);
    } catch (err) {
      progress.restore(updates);
      this.#failed(err, "progress write");
    }
  }

  /** Checks running jobs started before `startedBefore` (performance.now() ms). */
  async #checkRunning(startedBefore: number): Promise<void> {
    const { rt } = this.host;
    const runs = [...this.host.inFlight()].filter((r) => !r.settled && r.startedAt <= startedBefore);
    await Promise.all(
      runs.map(async (run) => {
        try {
          const row = await rt.backend.jobs.get(run.job.id);
          if (run.settled) return;
          if (row?.status === "cancelled") this.host.abandon(run, "cancelled");
          else if (row?.status !== "processing" || row.attempts !== run.job.attempts) {
            this.host.abandon(run, "lost");
          }
        } catch (err) {
          this.#failed(err, "running-job check");
        }
      }),
    );
  }

  /**
   * One stale-recovery pass outside the maintenance duty: `runOnce` runs it before it claims, so a deployment
   * that only ever calls `runOnce` still requeues the jobs of a run that died. No lease: recovery is one
   * atomic backend call that any number of workers may make at once (the lease only spares the repeats).
   * A failure is reported (`error`, during "stale recovery"), not thrown.
   */
  async recoverOnce(): Promise<void> {
    try {
      await this.#recover();
    } catch (err) {
      this.#failed(err, "stale recovery");
    }
  }

  /** Requeues the jobs of workers whose heartbeat is older than `staleAfterMs` (and of stopped ones). */
  async #recover(): Promise<void> {
    const { rt, options } = this.host;
    const recovery = await rt.backend.workers.recoverStale(options.staleAfterMs);
    if (recovery.requeuedJobIds.length > 0 || recovery.workerIds.length > 0) {
      rt.logger.warn(
        { staleWorkerIds: recovery.workerIds, requeuedJobIds: recovery.requeuedJobIds },
        "recovered stale workers; their jobs are queued again",
      );
      this.host.nudge();
    }
  }

  /**
   * A claim failed. It may have committed before its result was lost (a connection that dropped after the
   * claim's commit), leaving its jobs processing under this worker, which never saw them: the worker checks
   * before its next claim (`giveBackSuspected`) instead of waiting for the next maintenance tick.
   */
  suspectOrphans(): void {
    this.#orphansSuspected = true;
  }

  get orphansSuspected(): boolean {
    return this.#orphansSuspected;
  }

  /** Called by the worker at the start of a claim, before it reads anything: no other claim is in flight. */
  async giveBackSuspected(): Promise<void> {
    try {
      await this.#giveBack(await this.host.rt.backend.workers.processing(this.host.workerId));
    } catch (err) {
      this.#orphansSuspected = true;
      this.#failed(err, "orphan check");
    }
  }

  /**
   * Gives back the jobs processing under this worker that it does not hold. A claim's rows are processing
   * before the worker holds them, so the check is skipped while a claim is in flight, and its read is
   * dropped when a claim started meanwhile. The give-back is fenced (id, attempt, worker) like any outcome.
   */
  async #giveBackOrphans(): Promise<void> {
    const epoch = this.host.claimEpoch();
    if (epoch === null) return;
    const rows = await this.host.rt.backend.workers.processing(this.host.workerId);
    if (this.host.claimEpoch() !== epoch) return;
    await this.#giveBack(rows);
  }

  /** Gives back `rows` (this worker's processing jobs, read with no claim in flight) that it does not hold. */
  async #giveBack(rows: readonly ProcessingJob[]): Promise<void> {
    const { rt, workerId } = this.host;
    this.#orphansSuspected = false;
    const orphans = rows.filter((row) => !this.host.holds(row.id));
    if (orphans.length === 0) return;
    const applied = await rt.backend.runs.settle(orphans.map(nackSettlement), workerId);
    const jobIds = orphans.filter((_, i) => applied[i]).map((row) => row.id);
    if (jobIds.length === 0) return;
    rt.logger.warn(
      { workerId, jobIds },
      "jobs processing under this worker that it did not hold (a claim's result or an outcome was lost) are queued again",
    );
    this.host.nudge();
  }

  async #maintain(): Promise<void> {
    const { rt, workerId, options } = this.host;
    try {
      await this.#giveBackOrphans();
    } catch (err) {
      this.#failed(err, "orphan check");
    }
    try {
      this.#holdsLease = await rt.backend.leases.tryAcquire(
        MAINTENANCE_LEASE,
        workerId,
        maintenanceLeaseTtlMs(options),
        // The holder's liveness as this worker sees it: a holder stale by our threshold (or stopped) loses
        // the lease, whatever TTL its own, maybe longer, staleAfterMs gave it.
        { staleAfterMs: options.staleAfterMs },
      );
      await reportPending(rt, this.#holdsLease).catch((err) => this.#failed(err, "webhook pending count"));
      if (!this.#holdsLease) return;
      await this.#recover();
      const deleted = await rt.backend.jobs.deleteExpired();
      if (deleted > 0) rt.logger.debug({ deleted }, "deleted expired done jobs");
      if (rt.backend.supports("metrics")) await rt.backend.metrics.prune(METRICS_RETENTION_MS);
      await tidyOutbox(rt);
      // Always swept (not only with deliverWebhooks): the outbox rows are written here, any process sends them.
      await sweepFinishedFlows(rt.backend, rt.webhooks);
      if (options.deliverWebhooks) await this.#backlog.check();
    } catch (err) {
      this.#failed(err, "maintenance");
    }
  }
}
