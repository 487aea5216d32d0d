/**
 * What each outcome of a run writes: the one place for the rules every backend would otherwise repeat
 * (how `attempts` and `last_error` change on a retry, a snooze, a nack or a release at shutdown, and what a
 * dead-letter move records). Backends store these settlements as given (`runs.settle`).
 *
 * | outcome                          | writes                                                          |
 * | -------------------------------- | --------------------------------------------------------------- |
 * | done                             | status done, result kept `resultTtlMs` (0 deletes the row)      |
 * | retry (failed, attempts left)    | queued after the policy's delay; attempts kept; last_error set  |
 * | snooze                           | queued after the delay; the attempt given back; "SNOOZE: why"   |
 * | nack (shutdown timeout)          | queued now; attempts and last_error unchanged                   |
 * | release (claimed, never started) | queued now; the claim's attempt given back; last_error unchanged |
 * | dead letter                      | moved to the dead-letter table with its reason and error        |
 *
 * Every text written is storable on every backend (no NUL, no lone surrogate: `storableText`), so one
 * odd error message cannot fail the batch it is written with.
 */

import { storableText } from "../common/json.js";
import { MAX_DELAY_MS } from "../common/option-table.js";
import type { Job } from "../common/types.js";
import type {
  DeadLetterSettlement,
  DoneSettlement,
  FlowSettlement,
  NewFlowStep,
  RequeueSettlement,
} from "../contract/index.js";
import type { DeadLetterReason } from "../schema/constants.js";

/** A whole number of milliseconds from 0 to `MAX_DELAY_MS` (a retry function may return anything >= 0). */
function delay(ms: number): number {
  return ms > 0 ? Math.min(Math.round(ms), MAX_DELAY_MS) : 0;
}

/** The flow side of a step's job's settlement; undefined (no flow work at all) for other jobs. */
function flowOf(job: Job, add: readonly NewFlowStep[] = []): FlowSettlement | undefined {
  return job.flowId === null || job.stepRef === null
    ? undefined
    : { flowId: job.flowId, stepRef: job.stepRef, add };
}

/**
 * A flow step's result is kept while its flow is open, whatever the TTL (a dependent reads it through
 * `ctx.flow.parents()`), so a TTL of 0 keeps the row until expiry runs after the flow finished.
 */
export function doneSettlement(
  job: Job,
  result: unknown,
  resultTtlMs: number,
  add?: readonly NewFlowStep[],
): DoneSettlement {
  if (job.flowId === null) return { kind: "done", id: job.id, attempt: job.attempts, result, resultTtlMs };
  const ttl = Math.max(resultTtlMs, 1);
  return {
    kind: "done",
    id: job.id,
    attempt: job.attempts,
    result,
    resultTtlMs: ttl,
    flow: flowOf(job, add),
  };
}

export function retrySettlement(job: Job, error: string, delayMs: number): RequeueSettlement {
  return {
    kind: "requeue",
    cause: "retry",
    id: job.id,
    attempt: job.attempts,
    attempts: job.attempts,
    delayMs: delay(delayMs),
    lastError: storableText(error),
  };
}

/** The row's `last_error` after a snooze. */
export function snoozeText(reason: string | null): string {
  return reason === null ? "SNOOZE" : `SNOOZE: ${storableText(reason)}`;
}

/**
 * A job whose args are newer than the worker's handler goes back unrun: the claim's increment given back,
 * `last_error` unchanged, due after the worker's `newerVersionDelayMs`.
 */
export function newerVersionSettlement(job: Job, delayMs: number): RequeueSettlement {
  return {
    kind: "requeue",
    id: job.id,
    attempt: job.attempts,
    cause: "snooze",
    attempts: Math.max(0, job.attempts - 1),
    delayMs,
    lastError: null,
  };
}

/** A snooze does not spend an attempt: the claim's increment is given back. */
export function snoozeSettlement(job: Job, delayMs: number, reason: string | null): RequeueSettlement {
  return {
    kind: "requeue",
    cause: "snooze",
    id: job.id,
    attempt: job.attempts,
    attempts: Math.max(job.attempts - 1, 0),
    delayMs: delay(delayMs),
    lastError: snoozeText(reason),
  };
}

/** Shutdown timed out on a running job: it ran, so its attempt counts; due again now. */
export function nackSettlement(job: Pick<Job, "id" | "attempts">): RequeueSettlement {
  return {
    kind: "requeue",
    cause: "nack",
    id: job.id,
    attempt: job.attempts,
    attempts: job.attempts,
    delayMs: 0,
    lastError: null,
  };
}

/**
 * A job claimed but never started when the worker stopped: the claim counted an attempt that never ran,
 * so it is given back (a job with maxAttempts 1 is not dead-lettered by its next claim).
 */
export function releaseSettlement(job: Job): RequeueSettlement {
  return { ...nackSettlement(job), attempts: Math.max(job.attempts - 1, 0) };
}

export function deadLetterSettlement(
  job: Job,
  reason: DeadLetterReason,
  error: string | null,
): DeadLetterSettlement {
  const text = error === null ? null : storableText(error);
  const settlement: DeadLetterSettlement = {
    kind: "dead_letter",
    id: job.id,
    attempt: job.attempts,
    reason,
    error: text,
    tags: null,
  };
  if (job.flowId !== null) settlement.flow = flowOf(job);
  return settlement;
}

/** A claim took a job past its `maxAttempts` (its earlier runs never settled): it is not run again. */
export function isOverAttempts(job: Job): boolean {
  return job.attempts > job.maxAttempts;
}

/** The dead-letter move of a job claimed past its attempts; its error is the last one recorded. */
export function overAttemptsSettlement(job: Job): DeadLetterSettlement {
  return deadLetterSettlement(job, "max_retries_exceeded", job.lastError);
}
