/**
 * INTERIM: a minimal worker loop on the Backend contract alone, used until `@soniq/core`'s worker runtime
 * lands (rows labelled "contract loop"). It measures what the backend itself costs: claim into a local
 * buffer sized to the concurrency, run handlers, batch every outcome (done, retry, dead letter) into
 * `runs.settle`, wake on the backend's subscription, poll every second as the fallback. No heartbeats or
 * timeouts.
 */
import type { Job } from "@soniq/core";
import type { Backend, Settlement } from "@soniq/core/backend";
import { recordIncident } from "../incidents.js";
import { type BenchWorker, handle, kindOfTask, readIndex, type WorkerSpec } from "./types.js";

const POLL_MS = 1000;

export class ContractWorker implements BenchWorker {
  private buffer: Job[] = [];
  private running = 0;
  private fetching = false;
  private wanted = false;
  /** The last claim came back short: the queue is empty until a wake-up or the poll says otherwise. */
  private drained = false;
  /** The last claim was capped by a queue limit: claim again when a job of ours finishes (or a wake-up). */
  private held = false;
  private stopping = false;
  private settlements: Settlement[] = [];
  private flushing: Promise<void> | null = null;
  private poll: NodeJS.Timeout | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private idle: (() => void) | null = null;

  constructor(
    private readonly backend: Backend<unknown>,
    private readonly spec: WorkerSpec,
    private readonly resultTtlMs: number,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.backend.wakeUps.subscribe(() => this.wake());
    this.poll = setInterval(() => this.wake(), POLL_MS);
    this.poll.unref();
    this.wake();
  }

  /** A wake-up (notification, poll, start): new jobs may exist, even if a claim running now missed them. */
  private wake(): void {
    this.drained = false;
    this.held = false;
    if (this.fetching) this.wanted = true;
    else this.fetch();
  }

  private fetch(): void {
    if (this.stopping || this.fetching || this.drained || this.held) return;
    const room = this.spec.concurrency * 2 - this.buffer.length - this.running;
    if (room <= 0) return;
    this.fetching = true;
    this.wanted = false;
    this.backend.runs
      .claim({ queues: null, limit: room, workerId: null })
      .then(({ jobs, capped }) => {
        this.fetching = false;
        this.drained = jobs.length < room && capped === null && !this.wanted;
        this.held = jobs.length < room && capped !== null && !this.wanted;
        for (const job of jobs) {
          // Claimed past its attempts (an earlier run never settled): dead-lettered unrun, as core does.
          if (job.attempts > job.maxAttempts) this.settle(deadLetter(job, job.lastError));
          else this.buffer.push(job);
        }
        this.pump();
        this.fetch();
      })
      .catch((err: unknown) => {
        this.fetching = false;
        recordIncident("soniq contract claim", err);
      });
  }

  private pump(): void {
    while (!this.stopping && this.running < this.spec.concurrency && this.buffer.length > 0) {
      const job = this.buffer.shift() as Job;
      this.running++;
      void this.run(job);
    }
    if (this.buffer.length < this.spec.concurrency) this.fetch();
  }

  private async run(job: Job): Promise<void> {
    const kind = kindOfTask(job.jobName);
    const ref = { id: job.id, attempt: job.attempts };
    try {
      await handle(this.spec, kind, readIndex(job.args));
      this.settle({ kind: "done", ...ref, result: null, resultTtlMs: this.resultTtlMs });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.settle(
        job.attempts >= job.maxAttempts
          ? deadLetter(job, error)
          : { kind: "requeue", cause: "retry", ...ref, attempts: job.attempts, delayMs: 0, lastError: error },
      );
    }
    this.running--;
    this.held = false; // a slot of ours is free again (the poll covers capacity other workers hold)
    this.pump();
    if (this.running === 0 && this.idle) this.idle();
  }

  /** Every outcome goes through one batch per turn of the event loop, one settle call at a time. */
  private settle(item: Settlement): void {
    this.settlements.push(item);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = null;
      if (this.settlements.length > 0) this.scheduleFlush();
    });
  }

  private async flush(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const items = this.settlements;
    this.settlements = [];
    if (items.length === 0) return;
    await this.backend.runs.settle(items).catch((err: unknown) => {
      recordIncident("soniq contract settle", err);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.poll) clearInterval(this.poll);
    await this.unsubscribe?.();
    if (this.running > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    for (const job of this.buffer.splice(0)) {
      const ref = { id: job.id, attempt: job.attempts };
      this.settle({
        kind: "requeue",
        cause: "nack",
        ...ref,
        attempts: job.attempts,
        delayMs: 0,
        lastError: null,
      });
    }
    while (this.flushing) await this.flushing;
  }
}

function deadLetter(job: Job, error: string | null): Settlement {
  const ref = { id: job.id, attempt: job.attempts };
  return { kind: "dead_letter", ...ref, reason: "max_retries_exceeded", error, tags: null };
}
