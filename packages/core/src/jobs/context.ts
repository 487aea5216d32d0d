import { type Logger, safeLogger } from "../common/logger.js";
import type { FlowContext, Job } from "../common/types.js";
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
}

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
  ) {}

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
