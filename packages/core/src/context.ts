import { type Logger, safeLogger } from "./logger.js";
import type { FlowContext, Job } from "./types.js";

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
}

export class RunContext implements JobContext {
  #logger: Logger | undefined;

  constructor(
    readonly job: Job,
    readonly workerId: string | null,
    private readonly signalSource: { readonly signal: AbortSignal },
    private readonly baseLogger: Logger,
    readonly flow: FlowContext | null = null,
  ) {}

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
