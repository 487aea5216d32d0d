/**
 * Persisted per-minute metrics (`soniq_metrics`): the worker counts its applied outcomes in memory, per
 * (minute, queue, job name), and writes them in one `metrics.record` batch every `METRICS_FLUSH_MS` and at
 * stop, never one write per job. A failed flush keeps the counts for the next one.
 */

import type { MetricsRow } from "../contract/index.js";
import { addMetricCounts } from "../metrics-series.js";
import type { Runtime } from "../runtime.js";
import type { TypedEmitter } from "../typed-emitter.js";
import type { Job } from "../types.js";
import type { WorkerEvents } from "./events.js";

export const METRICS_FLUSH_MS = 15_000;
const MINUTE = 60_000;

type Counter = "done" | "failed" | "retried" | "deadLettered" | "snoozed";

export class MetricsRecorder {
  #rows = new Map<string, MetricsRow>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly rt: Runtime,
    events: TypedEmitter<WorkerEvents>,
  ) {
    events.on("job:done", ({ job, durationMs }) => this.#count(job, "done", durationMs));
    events.on("job:failed", ({ job }) => {
      this.#count(job, "failed");
      this.#count(job, "retried");
    });
    events.on("job:dead_letter", ({ job }) => this.#count(job, "deadLettered"));
    events.on("job:snoozed", ({ job }) => this.#count(job, "snoozed"));
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.flush(), METRICS_FLUSH_MS);
    this.#timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    if (this.#rows.size === 0) return;
    const rows = [...this.#rows.values()];
    this.#rows = new Map();
    try {
      await this.rt.backend.metrics.record(rows);
    } catch (err) {
      this.rt.logger.warn({ err }, "could not write the per-minute metrics; keeping them for the next flush");
      for (const row of rows) this.#merge(row);
    }
  }

  #count(job: Job, counter: Counter, runMs = 0): void {
    const bucketStart = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
    const row: MetricsRow = {
      bucketStart,
      queue: job.queue,
      jobName: job.jobName,
      done: 0,
      failed: 0,
      retried: 0,
      deadLettered: 0,
      snoozed: 0,
      runMsSum: runMs,
    };
    row[counter] = 1;
    this.#merge(row);
  }

  #merge(row: MetricsRow): void {
    const key = `${row.bucketStart.getTime()}\u0000${row.queue}\u0000${row.jobName}`;
    const stored = this.#rows.get(key);
    if (stored === undefined) {
      this.#rows.set(key, row);
      return;
    }
    addMetricCounts(stored, row);
  }
}
