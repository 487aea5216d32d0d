/**
 * Persisted per-minute metrics (`soniq_metrics`): the worker counts its applied outcomes in memory, per
 * (minute, queue, job name), and writes them in one `metrics.record` batch every `METRICS_FLUSH_MS` and at
 * stop, never one write per job. A failed flush keeps the counts for the next one.
 */

import type { Runtime } from "../app/runtime.js";
import type { TypedEmitter } from "../common/typed-emitter.js";
import type { Job } from "../common/types.js";
import type { MetricsRow } from "../contract/index.js";
import { addMetricCounts } from "../observability/series.js";
import type { WorkerEvents } from "./events.js";

export const METRICS_FLUSH_MS = 15_000;
const MINUTE = 60_000;

type Counter = "done" | "failed" | "retried" | "deadLettered" | "snoozed";

export class MetricsRecorder {
  #rows = new Map<string, MetricsRow>();
  /** The row the last outcome went to, and its minute (see `#count`). */
  #last: MetricsRow | undefined;
  #lastMinute = 0;
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
    if (!this.rt.backend.supports("metrics")) {
      this.#rows = new Map();
      return;
    }
    this.#rows = new Map();
    this.#last = undefined;
    try {
      await this.rt.backend.metrics.record(rows);
    } catch (err) {
      this.rt.logger.warn({ err }, "could not write the per-minute metrics; keeping them for the next flush");
      for (const row of rows) this.#merge(row);
    }
  }

  /**
   * Adds one outcome to its (minute, queue, job name) row. Outcomes come in runs of the same job in the same
   * minute, so the last row is tried first: most jobs then cost two compares and an increment, no key and no
   * allocation.
   */
  #count(job: Job, counter: Counter, runMs = 0): void {
    const minute = Math.floor(Date.now() / MINUTE);
    let row = this.#last;
    if (
      row === undefined ||
      this.#lastMinute !== minute ||
      row.queue !== job.queue ||
      row.jobName !== job.jobName
    ) {
      row = this.#row(minute, job.queue, job.jobName);
      this.#last = row;
      this.#lastMinute = minute;
    }
    row[counter] += 1;
    row.runMsSum += runMs;
  }

  /** The stored row for this minute, queue and job name (a new one, empty, when there is none). */
  #row(minute: number, queue: string, jobName: string): MetricsRow {
    const key = `${minute}\u0000${queue}\u0000${jobName}`;
    let row = this.#rows.get(key);
    if (row === undefined) {
      row = {
        bucketStart: new Date(minute * MINUTE),
        queue,
        jobName,
        done: 0,
        failed: 0,
        retried: 0,
        deadLettered: 0,
        snoozed: 0,
        runMsSum: 0,
      };
      this.#rows.set(key, row);
    }
    return row;
  }

  /** A failed flush's row back into the counts. */
  #merge(row: MetricsRow): void {
    addMetricCounts(this.#row(row.bucketStart.getTime() / MINUTE, row.queue, row.jobName), row);
  }
}
