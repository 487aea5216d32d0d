/**
 * The log of `soniq worker` / `soniq scheduler`: lines a person can read (`12:00:01 done orders.x 3f2a1b7c 12 ms`),
 * or `--log-format json`, one object per line with `time`, `level`, `event` and the event's fields.
 */

import type { Worker } from "@soniq/core";
import type { Redactor } from "@soniq/core/ops";
import { usage } from "./errors.js";
import { duration, firstLine, type Printer, shortId } from "./output.js";

export type LogFormat = "text" | "json";

export function logFormat(value: string): LogFormat {
  if (value !== "text" && value !== "json") throw usage(`--log-format takes text or json (got "${value}").`);
  return value;
}

export class WorkerLog {
  constructor(
    private readonly printer: Printer,
    private readonly format: LogFormat,
  ) {}

  event(
    level: "info" | "warn" | "error",
    event: string,
    text: string,
    fields: Record<string, unknown> = {},
  ): void {
    const now = new Date();
    if (this.format === "json") {
      this.printer.json({ time: now.toISOString(), level, event, ...fields }, true);
      return;
    }
    const p = this.printer;
    const word =
      level === "error" ? p.paint("red", event) : level === "warn" ? p.paint("yellow", event) : event;
    p.line(`${p.paint("dim", now.toISOString().slice(11, 19))} ${word.padEnd(10)} ${text}`);
  }

  /** Subscribes to a worker's events; error texts are shown through the app's `redact`. */
  follow(worker: Worker, redact: Redactor): void {
    const shown = (error: string, job: Parameters<Redactor["row"]>[0]) =>
      redact.error(error, job.jobName, job) ?? "";
    worker.on("job:done", ({ job, durationMs }) =>
      this.event("info", "done", `${job.jobName} ${shortId(job.id)} ${duration(durationMs)}`, {
        jobId: job.id,
        jobName: job.jobName,
        durationMs,
      }),
    );
    worker.on("job:failed", ({ job, error: raw, delayMs }) => {
      const error = shown(raw, job);
      this.event(
        "warn",
        "retry",
        `${job.jobName} ${shortId(job.id)} attempt ${job.attempts}/${job.maxAttempts} failed, again in ${duration(delayMs)}: ${firstLine(error, 80)}`,
        { jobId: job.id, jobName: job.jobName, attempt: job.attempts, delayMs, error: firstLine(error, 500) },
      );
    });
    worker.on("job:dead_letter", ({ job, reason, error: raw }) => {
      const error = shown(raw, job);
      this.event("error", "dead", `${job.jobName} ${shortId(job.id)} ${reason}: ${firstLine(error, 80)}`, {
        jobId: job.id,
        jobName: job.jobName,
        reason,
        error: firstLine(error, 500),
      });
    });
    worker.on("job:snoozed", ({ job, delayMs }) =>
      this.event("info", "snoozed", `${job.jobName} ${shortId(job.id)} for ${duration(delayMs)}`, {
        jobId: job.id,
        jobName: job.jobName,
        delayMs,
      }),
    );
    worker.on("job:cancelled", ({ job, why }) =>
      this.event("warn", "cancelled", `${job.jobName} ${shortId(job.id)} (${why})`, {
        jobId: job.id,
        jobName: job.jobName,
        why,
      }),
    );
    worker.on("error", ({ error, during }) =>
      this.event(
        "error",
        "error",
        `during ${during}: ${firstLine(error instanceof Error ? error.message : String(error), 200)}`,
        {
          during,
          error: error instanceof Error ? error.message : String(error),
        },
      ),
    );
    worker.on("worker:stale", ({ workerId }) =>
      this.event("warn", "stale", `a peer declared this worker stale; re-registered`, { workerId }),
    );
  }
}
