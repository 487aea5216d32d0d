/**
 * A worker's background duties, each on its own unref'd interval:
 * - heartbeat every `heartbeatIntervalMs`. A false heartbeat means a peer declared this worker stale
 *   (and requeued its jobs): log it, re-register, and check every running job. Otherwise only jobs
 *   running longer than one heartbeat interval are checked (one `getJob` each), so short jobs cost
 *   nothing: a job found cancelled or no longer held by this run is aborted here and its late result
 *   ignored. This is how a `cancelJob` from another process reaches a running handler.
 * - maintenance every `maintenanceIntervalMs` (and once at start), only while holding the
 *   `soniq.maintenance` lease so one worker does it at a time: requeue jobs of stale peers, delete
 *   expired done rows.
 */

import type { WorkerRegistration } from "../backend.js";
import { METRICS_RETENTION_MS } from "../metrics-series.js";
import type { ResolvedWorkerOptions } from "../options.js";
import type { Runtime } from "../runtime.js";
import type { WorkerEvents } from "./events.js";
import type { Running } from "./runner.js";

export const MAINTENANCE_LEASE = "soniq.maintenance";

export interface UpkeepHost {
  rt: Runtime;
  workerId: string;
  options: ResolvedWorkerOptions;
  registration(): WorkerRegistration;
  inFlight(): Iterable<Running>;
  abandon(run: Running, why: "cancelled" | "lost"): void;
  nudge(): void;
  emit<K extends keyof WorkerEvents>(event: K, payload: WorkerEvents[K]): void;
}

export class WorkerUpkeep {
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #maintenanceTimer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | null = null;
  #maintaining: Promise<void> | null = null;
  #holdsLease = false;

  constructor(private readonly host: UpkeepHost) {}

  /** Starts the heartbeat and, unless `maintenance` is false (runOnce), the maintenance duty. */
  start(maintenance = true): void {
    const { heartbeatIntervalMs, maintenanceIntervalMs } = this.host.options;
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
    this.#maintenanceTimer = setInterval(maintain, maintenanceIntervalMs);
    this.#maintenanceTimer.unref();
    maintain();
  }

  async stop(): Promise<void> {
    clearInterval(this.#heartbeatTimer);
    clearInterval(this.#maintenanceTimer);
    await Promise.all([this.#beating, this.#maintaining]);
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
      alive = await rt.backend.workers.heartbeat(workerId, options.metadata);
    } catch (err) {
      this.#failed(err, "heartbeat");
      return;
    }
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

  async #maintain(): Promise<void> {
    const { rt, workerId, options } = this.host;
    try {
      this.#holdsLease = await rt.backend.leases.tryAcquire(
        MAINTENANCE_LEASE,
        workerId,
        options.maintenanceIntervalMs * 2 + options.heartbeatIntervalMs,
      );
      if (!this.#holdsLease) return;
      const recovery = await rt.backend.workers.recoverStale(options.staleAfterMs);
      if (recovery.requeuedJobIds.length > 0 || recovery.workerIds.length > 0) {
        rt.logger.warn(
          { staleWorkerIds: recovery.workerIds, requeuedJobIds: recovery.requeuedJobIds },
          "recovered stale workers; their jobs are queued again",
        );
        this.host.nudge();
      }
      const deleted = await rt.backend.jobs.deleteExpired();
      if (deleted > 0) rt.logger.debug({ deleted }, "deleted expired done jobs");
      await rt.backend.metrics.prune(METRICS_RETENTION_MS);
    } catch (err) {
      this.#failed(err, "maintenance");
    }
  }
}
