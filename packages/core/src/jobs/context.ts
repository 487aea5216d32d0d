import { type Logger, safeLogger } from "../common/logger.js";
import type { FlowContext, Job } from "../common/types.js";
import type { Completed, StepOptions, WaitForSignalOptions } from "../steps/types.js";
import { checkProgress, type ProgressBuffer } from "./progress.js";

/** What a handler (and middleware) gets besides its args. */
export interface JobContext {
  /** The claimed row, as the claim returned it (attempts already counts this run). */
  readonly job: Job;
  readonly jobId: string;
  readonly jobName: string;
  /** 1 on the first run. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly queue: string;
  /** The registered worker running the job (`runOnce` registers one too). */
  readonly workerId: string | null;
  /** Aborted on timeout, cancellation, and forced shutdown; `signal.reason` says which. */
  readonly signal: AbortSignal;
  /** The instance logger with `jobId`, `jobName` and `attempt` bound. */
  readonly logger: Logger;
  /** The workflow step this job runs (`parents()`, `add()`); null for a job outside flows. */
  readonly flow: FlowContext | null;
  /**
   * Reports progress: a number or a small JSON value (at most 4 kB as JSON; beyond it, or for a value that
   * is not JSON, a `SONIQ_INVALID_ARGUMENT` error and nothing is stored). Calls are cheap and coalesced: the
   * latest value is written with the worker's next heartbeat and read back as `Job.progress`.
   */
  progress(value: unknown): void;
  /**
   * A durable step (capability `steps`, DESIGN.md section 19): runs `fn` once per job, across retries and
   * replays, and returns its value as stored (a JSON copy, at most `maxStepValueBytes`). A name used again in one
   * run is the next occurrence (`charge`, `charge#2`). A step that throws stores its last error and the error
   * propagates (the job's retry policy applies). `SONIQ_LEASE_LOST` when the run no longer holds the job.
   */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /**
   * The same with options: `{ transaction: true }` runs `fn(tx)` inside a transaction of the backend's connection
   * and commits the checkpoint in it, so the application's writes exist exactly when the step is recorded.
   */
  step<T, TTx = unknown>(name: string, options: StepOptions, fn: (tx: TTx) => T | Promise<T>): Promise<T>;
  /**
   * Sleeps `ms` durably: the wake time is a checkpoint. Under 1 s the run waits; longer, the job goes back to the
   * queue due at the wake time (no attempt spent, no worker slot held) and the handler runs again from the top.
   */
  sleep(name: string, ms: number): Promise<void>;
  /** As `sleep`, until an instant. */
  sleepUntil(name: string, until: Date): Promise<void>;
  /**
   * Waits for `soniq.jobs.signal(jobId, name, payload)` (a signal sent earlier is buffered and consumed oldest
   * first); resolves with its payload, or null after `timeoutMs` (required, at most 365 days). The job does not
   * hold a worker while it waits.
   */
  waitForSignal<T = unknown>(name: string, options: WaitForSignalOptions): Promise<T | null>;
  /**
   * Completes the job inside a transaction: `fn(tx)`'s writes, the job's `done` and its result commit together
   * (fenced). Return what it returns from the handler: `return ctx.complete({ transaction: true }, (tx) => ...)`.
   */
  complete<T, TTx = unknown>(
    options: { transaction: true },
    fn: (tx: TTx) => T | Promise<T>,
  ): Promise<Completed>;
}

/** What the context delegates its step methods to (the runner's `RunSteps`). */
export type StepCalls = Pick<JobContext, "sleep" | "sleepUntil" | "waitForSignal"> & {
  step<T>(
    name: string,
    a: StepOptions | (() => T | Promise<T>),
    b?: (tx: never) => T | Promise<T>,
  ): Promise<T>;
  complete<T>(options: { transaction: true }, fn: (tx: never) => T | Promise<T>): Promise<Completed>;
};

export class RunContext implements JobContext {
  #logger: Logger | undefined;

  constructor(
    readonly job: Job,
    readonly workerId: string | null,
    private readonly signalSource: { readonly signal: AbortSignal },
    private readonly baseLogger: Logger,
    readonly flow: FlowContext | null = null,
    private readonly progressBuffer: ProgressBuffer | null = null,
    /** Set when the backend does not declare the `progress` capability: what `progress()` throws. */
    private readonly progressUnsupported: (() => Error) | null = null,
    /** The run's durable steps, built on first use by the runner (a job without steps builds nothing). */
    private readonly steps: { runSteps(): StepCalls } | null = null,
  ) {}

  #steps(): StepCalls {
    if (this.steps === null) throw new Error("durable steps need a running job");
    return this.steps.runSteps();
  }

  step<T>(
    name: string,
    a: StepOptions | (() => T | Promise<T>),
    b?: (tx: never) => T | Promise<T>,
  ): Promise<T> {
    return this.#steps().step<T>(name, a, b);
  }

  sleep(name: string, ms: number): Promise<void> {
    return this.#steps().sleep(name, ms);
  }

  sleepUntil(name: string, until: Date): Promise<void> {
    return this.#steps().sleepUntil(name, until);
  }

  waitForSignal<T = unknown>(name: string, options: WaitForSignalOptions): Promise<T | null> {
    return this.#steps().waitForSignal<T>(name, options);
  }

  complete<T>(options: { transaction: true }, fn: (tx: never) => T | Promise<T>): Promise<Completed> {
    return this.#steps().complete(options, fn);
  }

  progress(value: unknown): void {
    if (this.progressUnsupported) throw this.progressUnsupported();
    const stored = checkProgress(value);
    this.progressBuffer?.set(this.job.id, this.job.attempts, stored);
  }

  /** Delegated so the AbortController is only built when a handler asks for the signal. */
  get signal(): AbortSignal {
    return this.signalSource.signal;
  }

  get jobId(): string {
    return this.job.id;
  }
  get jobName(): string {
    return this.job.jobName;
  }
  get attempt(): number {
    return this.job.attempts;
  }
  get maxAttempts(): number {
    return this.job.maxAttempts;
  }
  get queue(): string {
    return this.job.queue;
  }
  /** Built on first use: most handlers never log, so most jobs never pay for it. */
  get logger(): Logger {
    this.#logger ??= safeLogger(this.baseLogger, {
      jobId: this.job.id,
      jobName: this.job.jobName,
      attempt: this.job.attempts,
    });
    return this.#logger;
  }
}
