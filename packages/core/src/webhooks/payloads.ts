/**
 * What each event's body carries: `{ event, timestamp, data, metadata }`, with `redact` applied to whatever
 * comes from a job (args, result, error texts) before it is stored or sent. The events and their `data`:
 *
 * | event             | data                                                                         |
 * | ----------------- | ---------------------------------------------------------------------------- |
 * | job.completed     | job fields (below), `result`                                                 |
 * | job.failed        | job fields, `error`, `willRetry`, `retryInMs` (null when it will not retry)  |
 * | job.retried       | job fields, `error`, `retryInMs`, `nextAttempt`                               |
 * | job.dead_letter   | job fields, `reason`, `error`                                                |
 * | job.resurrected   | job fields of the dead letter, `deadLetterId`, `newJobId`, `resurrectionCount` |
 * | queue.backlog     | `queue`, `lagMs`, `lagAlertMs`                                               |
 * | schedule.missed   | `schedule`, `jobName`, `tickAt`, `reason`                                    |
 * | flow.finished     | `flowId`, `name`, `state`, `counts`, `createdAt`, `finishedAt` (flow-finished.ts) |
 *
 * Job fields: `jobId`, `jobName`, `queue`, `attempt`, `maxAttempts`, `args`, `traceId`.
 */

import type { DeadLetterJob, Job } from "../common/types.js";
import { SONIQ_VERSION } from "../common/version.js";
import type { Redactor } from "../observability/redact.js";

/** Every body's `metadata`. */
export const WEBHOOK_METADATA: Readonly<Record<string, unknown>> = Object.freeze({
  source: "soniq",
  version: SONIQ_VERSION,
});

/**
 * The W3C trace id the job was enqueued under, when the row carries one (`Job.traceId`, added by the
 * observability work); null until then. The one place webhooks read it.
 */
export function traceIdOf(job: Job | DeadLetterJob): string | null {
  return job.traceId;
}

/** The fields every job event carries. */
export function jobFields(job: Job, redact: Redactor): Record<string, unknown> {
  return {
    jobId: job.id,
    jobName: job.jobName,
    queue: job.queue,
    attempt: job.attempts,
    maxAttempts: job.maxAttempts,
    args: redact.value("args", job.args, job.jobName),
    traceId: traceIdOf(job),
  };
}

/** An error text as operators may see it. */
export function shownError(job: Pick<Job, "jobName" | "args">, error: string | null, redact: Redactor) {
  return redact.error(error, job.jobName, { jobName: job.jobName, args: job.args });
}

export function completedData(job: Job, result: unknown, redact: Redactor): Record<string, unknown> {
  return { ...jobFields(job, redact), result: redact.value("result", result ?? null, job.jobName) };
}

export function failedData(
  job: Job,
  error: string,
  retryInMs: number | null,
  redact: Redactor,
): Record<string, unknown> {
  return {
    ...jobFields(job, redact),
    error: shownError(job, error, redact),
    willRetry: retryInMs !== null,
    retryInMs,
  };
}

export function retriedData(job: Job, error: string, retryInMs: number, redact: Redactor) {
  return {
    ...jobFields(job, redact),
    error: shownError(job, error, redact),
    retryInMs,
    nextAttempt: job.attempts + 1,
  };
}

export function deadLetterData(job: Job, reason: string, error: string | null, redact: Redactor) {
  return { ...jobFields(job, redact), reason, error: shownError(job, error, redact) };
}

export function resurrectedData(row: DeadLetterJob, newJobId: string, redact: Redactor) {
  return {
    jobId: row.id,
    jobName: row.jobName,
    queue: row.queue,
    attempt: row.attempts,
    maxAttempts: row.maxAttempts,
    args: redact.value("args", row.args, row.jobName),
    traceId: traceIdOf(row),
    deadLetterId: row.id,
    newJobId,
    resurrectionCount: row.resurrectionCount + 1,
  };
}
