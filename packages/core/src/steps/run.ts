/**
 * One run's durable steps (DESIGN.md section 19): what `ctx.step`, `ctx.sleep`, `ctx.sleepUntil`,
 * `ctx.waitForSignal` and `ctx.complete` do. Core decides the occurrence names (`charge`, `charge#2`, in call
 * order), the limits (`maxSteps`, `maxStepValueBytes`), the JSON checks and what the handler sees; the backend's
 * `steps` facet stores, fences and suspends.
 *
 * A run reads the job's checkpoints once, at its first step call (a job that uses no step reads nothing). A
 * stored `done` checkpoint answers without running; anything else runs and writes, fenced by (job, attempt,
 * worker): a run that lost the job gets `SONIQ_LEASE_LOST` and stores nothing. A step returns its value as
 * stored (a JSON copy), the same on the run that computed it and on every later one.
 *
 * A sleep or signal wait due later than `IN_PROCESS_MS` suspends the run: the backend has put the job back to
 * `queued` (due at the wake time, attempt given back), `StepSuspended` unwinds the handler and the worker writes
 * nothing more for the run. A handler that catches it gets it again from every later step call.
 */

import { aroundStep } from "../app/plugins.js";
import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import { checkJson } from "../common/json.js";
import { JOB_NAME_PATTERN } from "../common/names.js";
import type { Job, JobStep } from "../common/types.js";
import type { DoneSettlement, StepRef, WaitRequest } from "../contract/index.js";
import type { JobContext } from "../jobs/context.js";
import { OCCURRENCE_SEPARATOR } from "./programs.js";
import { COMPLETED, type Completed, type StepOptions, type WaitForSignalOptions } from "./types.js";

/** A wait due sooner than this waits in process; later ones free the worker (DESIGN.md section 19). */
export const IN_PROCESS_MS = 1_000;
/** The longest `waitForSignal` timeout: 365 days. */
export const MAX_SIGNAL_TIMEOUT_MS = 365 * 86_400_000;
/** The largest signal payload, in bytes of its UTF-8 JSON text. */
export const MAX_SIGNAL_PAYLOAD_BYTES = 65_536;

/** Thrown through the handler when a sleep or signal wait suspended the run (the job is queued again). */
export class StepSuspended extends Error {
  constructor(
    readonly step: string,
    readonly wakeAt: Date,
  ) {
    super(`The job is suspended at "${step}" until ${wakeAt.toISOString()}; this run ends here.`);
    this.name = "StepSuspended";
  }
}

/** What the run needs from its surroundings. */
export interface StepHost {
  readonly rt: Runtime;
  readonly job: Job;
  readonly workerId: string | null;
  /** The run's context (what plugin hooks get). */
  readonly ctx: JobContext;
  /** The job's `resultTtlMs` (the definition's or the instance's). */
  readonly resultTtlMs: number;
  /** Aborted on timeout, cancel and shutdown: an in-process wait ends with its reason. */
  readonly signal: AbortSignal;
  /** The done settlement `ctx.complete` writes (flow steps and webhook deliveries ride on it). */
  doneSettlement(result: unknown): DoneSettlement;
  /** The stored text of an error (the runner's `formatError`). */
  formatError(err: unknown): string;
  /** Set when the backend does not declare `steps`: what every step call throws. */
  readonly unsupported: (() => Error) | null;
}

export class RunSteps {
  #loaded: Promise<Map<string, JobStep>> | undefined;
  #map: Map<string, JobStep> | undefined;
  #loadedCount = 0;
  readonly #occurrences = new Map<string, number>();
  /** Checkpoints this run added (not loaded): with the loaded ones, what `maxSteps` counts. */
  #added = 0;
  #suspended: StepSuspended | undefined;
  #completed: Completed | undefined;

  constructor(private readonly host: StepHost) {}

  /** Set when a wait suspended the run: the runner ends it without a settlement. */
  get suspended(): StepSuspended | undefined {
    return this.#suspended;
  }

  /** Set when `ctx.complete` committed the job's done: the runner reports it without another write. */
  get completed(): Completed | undefined {
    return this.#completed;
  }

  get #ref(): StepRef {
    return { id: this.host.job.id, attempt: this.host.job.attempts, workerId: this.host.workerId };
  }

  async step<T>(name: string, a: StepOptions | (() => T | Promise<T>), b?: (tx: never) => T | Promise<T>) {
    const [options, fn] = typeof a === "function" ? [{}, a] : [a, b];
    this.#usable("ctx.step");
    if (typeof fn !== "function") {
      throw new SoniqError("SONIQ_INVALID_ARGUMENT", "ctx.step(name, [options,] fn) needs a function.", {
        context: { field: "fn" },
      });
    }
    const transaction = checkStepOptions(options);
    const stepName = this.#occurrence(name, "ctx.step");
    const stored = await this.#stored(stepName, "step");
    if (stored?.state === "done") return stored.value as T;
    this.#reserve(stored);
    const startedAt = new Date(this.host.rt.options.clock.now());
    const { steps } = this.host.rt.backend;
    const write = (value: unknown) => ({
      name: stepName,
      state: "done" as const,
      value: this.#checkValue(stepName, value),
      error: null,
      startedAt,
    });
    const plugins = this.host.rt.plugins;
    const info = { name: stepName, transaction };
    const traced =
      plugins.length === 0
        ? (fn as (tx: unknown) => unknown)
        : (tx: unknown) =>
            aroundStep(plugins, this.host.ctx, info, () => (fn as (tx: unknown) => unknown)(tx));
    let written: { applied: boolean; value: unknown };
    try {
      if (transaction) {
        let checked: unknown;
        written = await steps.saveInTransaction(this.#ref, traced, (value) => {
          const w = write(value);
          checked = w.value;
          return w;
        });
        written = { applied: written.applied, value: checked };
      } else {
        const value = await traced(undefined);
        const w = write(value);
        written = { applied: await steps.save(this.#ref, w), value: w.value };
      }
    } catch (err) {
      if (REFUSED.has(err as object)) {
        // The value broke a limit: nothing is stored, and the checkpoint it would have been is not counted.
        this.#added--;
      } else if (!(err instanceof SoniqError && err.code === "SONIQ_LEASE_LOST")) {
        await this.#failed(stepName, err, startedAt);
      }
      throw err;
    }
    if (!written.applied) throw leaseLost(this.host.job, stepName);
    return written.value as T;
  }

  async sleep(name: string, ms: number): Promise<void> {
    this.#usable("ctx.sleep");
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new SoniqError("SONIQ_INVALID_ARGUMENT", "ctx.sleep(name, ms): ms must be an integer >= 0.", {
        context: { field: "ms", value: ms },
      });
    }
    const stepName = this.#occurrence(name, "ctx.sleep");
    await this.#wait(stepName, { kind: "sleep", name: stepName, wakeAt: null, delayMs: ms });
  }

  async sleepUntil(name: string, until: Date): Promise<void> {
    this.#usable("ctx.sleepUntil");
    if (!(until instanceof Date) || Number.isNaN(until.getTime())) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        "ctx.sleepUntil(name, date): date must be a valid Date.",
        {
          context: { field: "until" },
        },
      );
    }
    const stepName = this.#occurrence(name, "ctx.sleepUntil");
    await this.#wait(stepName, { kind: "sleep", name: stepName, wakeAt: until, delayMs: 0 });
  }

  async waitForSignal<T>(name: string, options: WaitForSignalOptions): Promise<T | null> {
    this.#usable("ctx.waitForSignal");
    const timeoutMs = (options as Partial<WaitForSignalOptions> | undefined)?.timeoutMs;
    if (
      !Number.isSafeInteger(timeoutMs) ||
      (timeoutMs as number) < 0 ||
      (timeoutMs as number) > MAX_SIGNAL_TIMEOUT_MS
    ) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `ctx.waitForSignal(name, { timeoutMs }): timeoutMs is required, an integer from 0 to ${MAX_SIGNAL_TIMEOUT_MS} (365 days).`,
        { context: { field: "timeoutMs", value: timeoutMs } },
      );
    }
    const stepName = this.#occurrence(name, "ctx.waitForSignal");
    const signal = name;
    const value = await this.#wait(stepName, {
      kind: "signal",
      name: stepName,
      signal,
      timeoutMs: timeoutMs as number,
    });
    return value === TIMED_OUT ? null : (value as T);
  }

  async complete<T>(options: { transaction: true }, fn: (tx: never) => T | Promise<T>): Promise<Completed> {
    this.#usable("ctx.complete");
    if (
      (options as { transaction?: unknown } | undefined)?.transaction !== true ||
      typeof fn !== "function"
    ) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        "ctx.complete({ transaction: true }, (tx) => result) needs the transaction option and a function.",
        { context: { field: typeof fn !== "function" ? "fn" : "options.transaction" } },
      );
    }
    if (this.#completed) {
      throw new SoniqError("SONIQ_INVALID_STATE", "ctx.complete() was already called in this run.");
    }
    let result: unknown;
    const written = await this.host.rt.backend.steps.completeInTransaction(
      this.#ref,
      fn as (tx: unknown) => T | Promise<T>,
      (value) => {
        const json = checkJson(value === undefined ? null : value);
        if (!json.ok) {
          throw new SoniqError(
            "SONIQ_INVALID_ARGUMENT",
            `ctx.complete(): the result is not JSON: ${json.problem.problem} at ${json.problem.path}`,
            { context: { path: json.problem.path } },
          );
        }
        result = json.value;
        return this.host.doneSettlement(result);
      },
    );
    if (!written.applied) throw leaseLost(this.host.job, "complete");
    this.#completed = Object.freeze({ [COMPLETED]: true as const, result });
    return this.#completed;
  }

  /** Throws what the run cannot do: no `steps` capability, or a suspension already under way. */
  #usable(what: string): void {
    if (this.host.unsupported) throw this.host.unsupported();
    if (this.#suspended) throw this.#suspended;
    if (this.#completed && what !== "ctx.complete") {
      throw new SoniqError(
        "SONIQ_INVALID_STATE",
        `${what}: the job was already completed by ctx.complete().`,
      );
    }
  }

  #occurrence(name: string, what: string): string {
    if (typeof name !== "string" || !JOB_NAME_PATTERN.test(name) || name.length > 200) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `${what}(name): the name must match ${JOB_NAME_PATTERN} (at most 200 characters), like "charge_card" or "emails.welcome".`,
        { context: { field: "name", value: typeof name === "string" ? name.slice(0, 64) : typeof name } },
      );
    }
    const n = (this.#occurrences.get(name) ?? 0) + 1;
    this.#occurrences.set(name, n);
    return n === 1 ? name : `${name}${OCCURRENCE_SEPARATOR}${n}`;
  }

  #load(): Promise<Map<string, JobStep>> {
    this.#loaded ??= this.host.rt.backend.steps.list(this.host.job.id).then((rows) => {
      this.#loadedCount = rows.length;
      this.#map = new Map(rows.map((row) => [row.name, row]));
      return this.#map;
    });
    return this.#loaded;
  }

  /** The stored checkpoint of that name; a checkpoint of another kind under it is a programming error. */
  async #stored(name: string, kind: JobStep["kind"]): Promise<JobStep | undefined> {
    const stored = (await this.#load()).get(name);
    if (stored !== undefined && stored.kind !== kind) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `"${name}" is a ${stored.kind} checkpoint of this job; a ${kind} cannot reuse its name (names are per job, with #n for repeats).`,
        { context: { field: "name", name, stored: stored.kind, called: kind } },
      );
    }
    return stored;
  }

  /** Counts a new checkpoint against `maxSteps` (a stored one is already counted). */
  #reserve(stored: JobStep | undefined): void {
    if (stored !== undefined) return;
    const max = this.host.rt.options.maxSteps;
    // Loaded before any reserve: #stored awaited #load.
    const loaded = this.#loadedCount;
    if (loaded + this.#added >= max) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `The job already holds ${loaded + this.#added} checkpoints, the most \`maxSteps\` allows (${max}); nothing was stored.`,
        { context: { field: "maxSteps", limit: max } },
      );
    }
    this.#added++;
  }

  #checkValue(name: string, value: unknown): unknown {
    const json = checkJson(value === undefined ? null : value);
    if (!json.ok) {
      throw refused(
        "SONIQ_INVALID_ARGUMENT",
        `ctx.step("${name}"): the value is not JSON: ${json.problem.problem} at ${json.problem.path}; nothing was stored.`,
        { context: { field: "value", step: name, path: json.problem.path } },
      );
    }
    const text = JSON.stringify(json.value);
    const limit = this.host.rt.options.maxStepValueBytes;
    // Characters never exceed bytes, so most values skip the byte count.
    const bytes = text.length * 3 <= limit ? text.length : Buffer.byteLength(text, "utf8");
    if (bytes > limit) {
      throw refused(
        "SONIQ_INVALID_ARGUMENT",
        `ctx.step("${name}"): the value is ${bytes} bytes as JSON, more than \`maxStepValueBytes\` (${limit}); nothing was stored (keep large data elsewhere and store a reference).`,
        { context: { field: "value", step: name, bytes, limit } },
      );
    }
    return JSON.parse(text) as unknown;
  }

  /** A step that threw: its last error on its row (for the timeline), best effort; the error propagates. */
  async #failed(name: string, err: unknown, startedAt: Date): Promise<void> {
    try {
      await this.host.rt.backend.steps.save(this.#ref, {
        name,
        state: "failed",
        value: null,
        error: this.host.formatError(err),
        startedAt,
      });
    } catch (writeErr) {
      this.host.rt.logger.warn(
        { err: writeErr, jobId: this.host.job.id, step: name },
        "a failed step's error could not be stored",
      );
    }
  }

  async #wait(name: string, request: WaitRequest): Promise<unknown> {
    const stored = await this.#stored(name, request.kind);
    if (stored?.state === "done") return stored.value;
    if (stored?.state === "timed_out") return TIMED_OUT;
    this.#reserve(stored);
    const { steps } = this.host.rt.backend;
    for (;;) {
      const result = await steps.wait(this.#ref, request, IN_PROCESS_MS);
      switch (result.state) {
        case "lost":
          throw leaseLost(this.host.job, name);
        case "done":
          return result.value;
        case "timed_out":
          return TIMED_OUT;
        case "waiting":
          if (result.suspended) {
            this.#suspended = new StepSuspended(name, result.wakeAt);
            throw this.#suspended;
          }
          await pause(this.host.rt.options.clock, result.remainingMs, this.host.signal);
      }
    }
  }
}

const TIMED_OUT = Symbol("timed_out");

/** The errors of a step value that breaks a limit (not JSON, too large): no failed checkpoint is written for them. */
const REFUSED = new WeakSet<object>();

function refused(
  code: "SONIQ_INVALID_ARGUMENT",
  message: string,
  options: { context: Record<string, unknown> },
) {
  const err = new SoniqError(code, message, options);
  REFUSED.add(err);
  return err;
}

function leaseLost(job: Job, step: string): SoniqError {
  return new SoniqError(
    "SONIQ_LEASE_LOST",
    `Job ${job.id} is no longer held by this run (cancelled, recovered or claimed again); "${step}" was not stored.`,
    { context: { jobId: job.id, attempt: job.attempts, step } },
  );
}

function checkStepOptions(options: unknown): boolean {
  if (typeof options !== "object" || options === null) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      "ctx.step(name, options, fn): options must be an object.",
      {
        context: { field: "options" },
      },
    );
  }
  const transaction = (options as StepOptions).transaction;
  if (transaction !== undefined && typeof transaction !== "boolean") {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      "ctx.step(name, { transaction }, fn): transaction must be a boolean.",
      {
        context: { field: "options.transaction" },
      },
    );
  }
  return transaction === true;
}

/** Waits `ms` on the instance's clock; rejects with the run's abort reason. */
function pause(clock: Runtime["options"]["clock"], ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      timer.cancel();
      reject(signal.reason);
    };
    const timer = clock.setTimer(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(1, ms),
    );
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
