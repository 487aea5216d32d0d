/**
 * Runs one claimed job and decides its outcome; writes nothing. The outcome writer turns the outcome into
 * its settlement (settlements.ts). Outcome table (DESIGN.md section 4, UPSTREAM.md 4.3):
 *
 * | what happened                         | outcome                                   |
 * | ------------------------------------- | ----------------------------------------- |
 * | no handler for the name on this worker | dead letter, `job_not_found`              |
 * | args newer than the handler's version | given back after `newerVersionDelayMs`, attempt not spent |
 * | no upcaster path, or one that throws  | dead letter, `invalid_arguments`          |
 * | args fail the job's schema            | dead letter, `invalid_arguments`          |
 * | handler returned a value              | done (result stored for `resultTtlMs`)    |
 * | handler returned `snooze(ms)`         | requeued after ms, attempt not spent      |
 * | threw `PermanentError`                | dead letter, `permanent_failure`          |
 * | threw / timed out, attempts left      | retry after the policy's delay            |
 * | retry function returned null          | dead letter, `permanent_failure`          |
 * | threw / timed out, no attempts left   | dead letter, `max_retries_exceeded`       |
 */

import { unsupported } from "../app/guard.js";
import { runChain } from "../app/plugins.js";
import { callHook, type Runtime } from "../app/runtime.js";
import { JobAbortedError } from "../common/errors.js";
import { checkJson } from "../common/json.js";
import type { Job } from "../common/types.js";
import { flowContextOf, type RunFlowContext } from "../flows/service.js";
import { RunContext } from "../jobs/context.js";
import { formatIssues, type RegisteredJob, validateWithSchema } from "../jobs/definition.js";
import { isPermanentError, isSnooze } from "../jobs/outcomes.js";
import type { ProgressBuffer } from "../jobs/progress.js";
import { computeRetryDelay, DEFAULT_RETRY } from "../jobs/retry-policy.js";
import { upcastArgs } from "../jobs/versions.js";
import type { DeadLetterReason } from "../schema/constants.js";
import { RunSteps } from "../steps/run.js";
import { doneSettlement } from "./settlements.js";
import { completedEvents, withDeliveries } from "./webhook-events.js";

export type Outcome =
  | { kind: "done"; result: unknown }
  | { kind: "retry"; error: string; delayMs: number }
  | { kind: "dead_letter"; reason: DeadLetterReason; error: string }
  | { kind: "snooze"; delayMs: number; reason: string | null }
  /** The job's args are newer than this worker's handler (a rolling deploy): give it back, no attempt spent. */
  | { kind: "newer_version"; version: number }
  /** No write: a sleep or signal wait already put the job back to `queued`, due at `wakeAt`. */
  | { kind: "suspended"; wakeAt: Date }
  /** No write: `ctx.complete` already committed the job's done with this result. */
  | { kind: "completed"; result: unknown }
  /** No write: the row was cancelled (or taken over by stale recovery) while the job ran. */
  | { kind: "abandoned"; why: "cancelled" | "lost" }
  /** Shutdown: give the job back with its attempt preserved. */
  | { kind: "nack" };

/** Why a worker took a running job over (its signal is aborted with `abandonError(why)`). */
export type AbandonReason = "cancelled" | "lost" | "shutdown";

export function abandonError(why: AbandonReason): JobAbortedError {
  const message =
    why === "cancelled"
      ? "The job was cancelled"
      : why === "lost"
        ? "The job is no longer held by this worker (recovered as stale)"
        : "The worker is shutting down";
  return new JobAbortedError(why, message);
}

export function timeoutError(run: Running): JobAbortedError {
  const ms = run.def?.options.timeoutMs ?? 0;
  const err = new JobAbortedError("timeout", `Job "${run.job.jobName}" timed out after ${ms} ms`);
  err.stack = `${err.name}: ${err.message}`;
  return err;
}

/** Longest `last_error` stored (characters). */
export const MAX_ERROR_LENGTH = 8192;

/**
 * `Name: message` plus the stack, capped at 8 KiB, and formatted once at a bounded cost. The stack is read
 * (which makes V8 format it) only when it can still appear in the stored text: a name and message that fill
 * the cap alone are cut from the message itself, without formatting a stack that would be cut off anyway
 * (a 100 KB message cost 300-700 µs per failure before, bench/README.md).
 */
export function formatError(err: unknown): string {
  let text: string;
  if (err instanceof Error) {
    const head = errorHead(err);
    if (head.length >= MAX_ERROR_LENGTH) return head.slice(0, MAX_ERROR_LENGTH);
    const stack = typeof err.stack === "string" ? err.stack : "";
    text = stack.startsWith(head) ? stack : stack ? `${head}\n${stack}` : head;
  } else if (typeof err === "string") {
    text = err;
  } else {
    try {
      text = `Non-error thrown: ${JSON.stringify(err)}`;
    } catch {
      text = `Non-error thrown: ${String(err)}`;
    }
  }
  return text.length > MAX_ERROR_LENGTH ? text.slice(0, MAX_ERROR_LENGTH) : text;
}

/** `Name: message`, with name and message each cut to the cap first (a huge message is not copied whole). */
function errorHead(err: Error): string {
  const name = String(err.name);
  const message = String(err.message);
  const cut = (s: string) => (s.length > MAX_ERROR_LENGTH ? s.slice(0, MAX_ERROR_LENGTH) : s);
  return `${cut(name)}: ${cut(message)}`;
}

/** One running job: its context, abort controller (made on first use) and settle-once flag. */
export class Running {
  settled = false;
  /** Settled by a timeout, cancel or shutdown (which record the outcome), not by the runner. */
  takenOver = false;
  /** Epoch ms when the job times out; 0 = no limit. */
  deadline = 0;
  /** Set when recorded, for the event sent once the settlement is written. */
  outcome: Outcome | undefined = undefined;
  durationMs = 0;
  readonly startedAt = performance.now();
  readonly ctx: RunContext;
  /** `ctx.flow` of a flow step's job (its `add`'s steps ride on the done settlement). */
  readonly flow: RunFlowContext | null;
  #controller: AbortController | undefined;
  #abortReason: JobAbortedError | undefined;
  /** The run's durable steps, built at the first step call. */
  steps: RunSteps | undefined = undefined;

  constructor(
    readonly job: Job,
    readonly def: RegisteredJob | undefined,
    workerId: string | null,
    rt: Runtime,
    progress: ProgressBuffer | null = null,
  ) {
    this.flow = job.flowId === null ? null : flowContextOf(rt, job);
    const unsupportedProgress = rt.backend.supports("progress")
      ? null
      : () => unsupported(rt.backend.name, "progress", "ctx.progress");
    this.ctx = new RunContext(job, workerId, this, rt.logger, this.flow, progress, unsupportedProgress, this);
    this.#rt = rt;
    this.#workerId = workerId;
  }

  readonly #rt: Runtime;
  readonly #workerId: string | null;

  /** The run's durable steps, built at the first step call (a job without steps allocates nothing for them). */
  runSteps(): RunSteps {
    if (this.steps !== undefined) return this.steps;
    const { job, def } = this;
    const rt = this.#rt;
    const resultTtlMs = def?.options.resultTtlMs ?? rt.options.resultTtlMs;
    this.steps = new RunSteps({
      rt,
      job,
      workerId: this.#workerId,
      ctx: this.ctx,
      resultTtlMs,
      signal: this.signal,
      doneSettlement: (result) =>
        withDeliveries(
          doneSettlement(job, result, resultTtlMs, this.flow?.added),
          completedEvents(rt, job, result),
        ),
      formatError,
      unsupported: rt.backend.supports("steps")
        ? null
        : () => unsupported(rt.backend.name, "steps", "ctx.step"),
    });
    return this.steps;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** Marks the run settled; false when something else (timeout, cancel, shutdown) settled it first. */
  settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    return true;
  }

  abort(reason: JobAbortedError): void {
    if (this.#abortReason) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * Executes the handler through middleware and hooks. The run is settled here at the moment the outcome is
 * decided (so a timeout or cancel arriving during `afterJob`/`onError` hooks cannot record a second
 * outcome); resolves with null when a timeout, cancel or shutdown settled it first.
 */
export async function executeJob(rt: Runtime, run: Running): Promise<Outcome | null> {
  const { job, def, ctx } = run;
  if (!def) {
    if (!run.settle()) return null;
    return {
      kind: "dead_letter",
      reason: "job_not_found",
      error: `No handler for job "${job.jobName}" is registered on this worker.`,
    };
  }
  let args = job.args;
  const version = def.options.version;
  if (job.argsVersion !== null && job.argsVersion !== version) {
    if (job.argsVersion > version) {
      if (!run.settle()) return null;
      return { kind: "newer_version", version: job.argsVersion };
    }
    const up = upcastArgs(job.jobName, def.options.upcast, args, job.argsVersion, version);
    if (!up.ok) {
      if (!run.settle()) return null;
      return { kind: "dead_letter", reason: "invalid_arguments", error: up.error };
    }
    args = up.args;
  }
  if (def.options.schema) {
    const parsed = await validateWithSchema(def.options.schema, args);
    if (!parsed.ok) {
      if (!run.settle()) return null;
      return {
        kind: "dead_letter",
        reason: "invalid_arguments",
        error: `Args fail the schema of "${job.jobName}": ${formatIssues(parsed.issues)}`,
      };
    }
    args = parsed.value;
  }
  if (rt.plugins.length > 0) await callHook(rt, "beforeJob", (p) => p.beforeJob?.(ctx));
  // Call the handler from a fresh microtask. Jobs start back to back from the worker's synchronous pump
  // chain (a finished job's write starts the next job), so an error the handler throws would capture
  // ten frames of Soniq internals and none of the caller's; V8 capturing and formatting them was the
  // largest part of a failed job's CPU (bench/README.md). Now a stack holds the handler's frames,
  // executeJob and the "async" caller.
  await undefined;
  let value: unknown;
  try {
    // Without middleware, call the handler directly: no chain closures on the hot path.
    const chain = rt.middleware;
    value = await (chain.length === 0
      ? def.handler(args, ctx)
      : runChain(chain, ctx, async () => def.handler(args, ctx)));
  } catch (err) {
    if (run.steps !== undefined) {
      const ended = stepOutcome(run.steps);
      if (ended !== null) return run.settle() ? ended : null;
    }
    return run.settle() ? failureOutcome(rt, run, err) : null;
  }
  if (run.steps !== undefined) {
    const ended = stepOutcome(run.steps);
    if (ended !== null) {
      if (!run.settle()) return null;
      if (ended.kind === "completed" && rt.plugins.length > 0)
        await callHook(rt, "afterJob", (p) => p.afterJob?.(ctx, ended.result));
      return ended;
    }
  }
  if (!run.settle()) return null;
  if (isSnooze(value)) {
    const cap = rt.options.maxSnoozeMs;
    if (value.delayMs > cap) rt.logger.warn({ jobId: job.id, delayMs: value.delayMs, cap }, "snooze capped");
    return { kind: "snooze", delayMs: Math.min(value.delayMs, cap), reason: value.reason };
  }
  const json = checkJson(value === undefined ? null : value);
  if (!json.ok) {
    const err = new TypeError(
      `The handler's result is not JSON: ${json.problem.problem} at ${json.problem.path}`,
    );
    return failureOutcome(rt, run, err);
  }
  if (rt.plugins.length > 0) await callHook(rt, "afterJob", (p) => p.afterJob?.(ctx, json.value));
  return { kind: "done", result: json.value };
}

/** A run a step ended: suspended by a wait, or completed by `ctx.complete` (whatever the handler did after). */
function stepOutcome(steps: RunSteps): Outcome | null {
  if (steps.completed) return { kind: "completed", result: steps.completed.result };
  if (steps.suspended) return { kind: "suspended", wakeAt: steps.suspended.wakeAt };
  return null;
}

/** The outcome of a failed attempt: retry per policy, or dead letter. Calls `onError` hooks. */
export async function failureOutcome(rt: Runtime, run: Running, err: unknown): Promise<Outcome> {
  const { job, def, ctx } = run;
  const error = formatError(err);
  if (rt.plugins.length > 0) await callHook(rt, "onError", (p) => p.onError?.(ctx, err));
  if (isPermanentError(err)) return { kind: "dead_letter", reason: "permanent_failure", error };
  if (job.attempts >= job.maxAttempts) return { kind: "dead_letter", reason: "max_retries_exceeded", error };
  const policy = def?.options.retry ?? rt.options.retry;
  const retryCtx = { attempt: job.attempts, maxAttempts: job.maxAttempts, error: err, job };
  let delayMs: number | null;
  try {
    delayMs = computeRetryDelay(policy, retryCtx);
  } catch (policyErr) {
    rt.logger.error({ err: policyErr, jobId: job.id }, "retry policy failed; using the default policy");
    delayMs = computeRetryDelay(DEFAULT_RETRY, retryCtx);
  }
  if (delayMs === null) return { kind: "dead_letter", reason: "permanent_failure", error };
  return { kind: "retry", error, delayMs };
}
