/**
 * INTERIM: a minimal worker loop on the Backend contract alone, used until `@soniq/core`'s worker runtime
 * lands (rows labelled "contract loop"). It measures what the backend itself costs: claim into a local
 * buffer sized to the concurrency, run handlers, batch completions, dead-letter failures (max attempts 1),
 * wake on the backend's subscription, poll every second as the fallback. No heartbeats or timeouts.
 */
import type { Backend, CompleteItem, Job } from "@soniq/core";
import { type BenchWorker, handle, readIndex, TASK_NAMES, type TaskKind, type WorkerSpec } from "./types.js";

const POLL_MS = 1000;

export class ContractWorker implements BenchWorker {
  private buffer: Job[] = [];
  private running = 0;
  private fetching = false;
  private wanted = false;
  /** The last claim came back short: the queue is empty until a wake-up or the poll says otherwise. */
  private drained = false;
  private stopping = false;
  private done: CompleteItem[] = [];
  private flushing: Promise<void> | null = null;
  private pending = new Set<Promise<unknown>>();
  private poll: NodeJS.Timeout | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private idle: (() => void) | null = null;

  constructor(
    private readonly backend: Backend<unknown>,
    private readonly spec: WorkerSpec,
    private readonly resultTtlMs: number,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.backend.subscribe(() => this.wake());
    this.poll = setInterval(() => this.wake(), POLL_MS);
    this.poll.unref();
    this.wake();
  }

  /** A wake-up (notification, poll, start): new jobs may exist, even if a claim running now missed them. */
  private wake(): void {
    this.drained = false;
    if (this.fetching) this.wanted = true;
    else this.fetch();
  }

  private fetch(): void {
    if (this.stopping || this.fetching || this.drained) return;
    const room = this.spec.concurrency * 2 - this.buffer.length - this.running;
    if (room <= 0) return;
    this.fetching = true;
    this.wanted = false;
    this.backend
      .claim({ queues: null, limit: room, workerId: null })
      .then((jobs) => {
        this.fetching = false;
        this.drained = jobs.length < room && !this.wanted;
        this.buffer.push(...jobs);
        this.pump();
        this.fetch();
      })
      .catch((err: unknown) => {
        this.fetching = false;
        process.emitWarning(`soniq claim failed: ${String(err)}`);
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
    const kind: TaskKind = job.jobName === TASK_NAMES.fail ? "fail" : "noop";
    try {
      await handle(this.spec, kind, readIndex(job.args));
      this.done.push({ id: job.id, attempt: job.attempts, result: null, resultTtlMs: this.resultTtlMs });
      this.scheduleFlush();
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const write =
        job.attempts >= job.maxAttempts
          ? this.backend.markJobDeadLetter(job.id, {
              reason: "max_retries_exceeded",
              error,
              attempt: job.attempts,
            })
          : this.backend.retry({ id: job.id, attempt: job.attempts }, { error, delayMs: 0 });
      this.track(write);
    }
    this.running--;
    this.pump();
    if (this.running === 0 && this.idle) this.idle();
  }

  private track(write: Promise<unknown>): void {
    const p = write
      .catch((err: unknown) => process.emitWarning(`soniq write failed: ${String(err)}`))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = null;
      if (this.done.length > 0) this.scheduleFlush();
    });
  }

  private async flush(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const items = this.done;
    this.done = [];
    if (items.length > 0) await this.backend.complete(items);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.poll) clearInterval(this.poll);
    await this.unsubscribe?.();
    if (this.running > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    while (this.flushing) await this.flushing;
    await Promise.all(this.pending);
    for (const job of this.buffer.splice(0)) await this.backend.nack({ id: job.id, attempt: job.attempts });
  }
}
