/**
 * `soniq.worker({ schedules: true | { checkIntervalMs } })`: a worker that also runs a scheduler, started
 * after the worker and stopped with it (the scheduler releases leadership at once).
 */

import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import type { ResolvedWorkerOptions } from "../worker/options.js";
import { Worker } from "../worker/worker.js";
import type { Scheduler, SchedulerOptions } from "./scheduler.js";

/** The worker option that runs a scheduler inside the worker. */
export interface WorkerScheduleOptions {
  /** Run a scheduler in this worker: `true`, or its options. Default false. */
  schedules?: boolean | Pick<SchedulerOptions, "checkIntervalMs">;
}

/** The scheduler options a worker's `schedules` option asks for, or null for none. */
export function workerSchedulerOptions(value: unknown): SchedulerOptions | null {
  if (value === undefined || value === false) return null;
  if (value === true) return {};
  if (
    typeof value === "object" &&
    value !== null &&
    Object.keys(value).every((k) => k === "checkIntervalMs")
  ) {
    return { ...(value as SchedulerOptions) };
  }
  throw new SoniqError(
    "SONIQ_INVALID_OPTIONS",
    "Invalid worker() options: schedules must be true, false or { checkIntervalMs }.",
    { context: { field: "schedules", problems: ["schedules must be true, false or { checkIntervalMs }"] } },
  );
}

export class SchedulingWorker extends Worker {
  readonly scheduler: Scheduler;

  constructor(rt: Runtime, options: ResolvedWorkerOptions, scheduler: Scheduler) {
    super(rt, options);
    this.scheduler = scheduler;
  }

  override async start(): Promise<void> {
    await super.start();
    try {
      await this.scheduler.start();
    } catch (err) {
      await super.stop();
      throw err;
    }
  }

  override async stop(): Promise<void> {
    const results = await Promise.allSettled([this.scheduler.stop(), super.stop()]);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
}
