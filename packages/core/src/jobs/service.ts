/**
 * `soniq.jobs`: enqueue jobs (one or many, by name), read and list them, count them, cancel one, wait for
 * one's outcome and ask why one is (not) running. Job definitions (`soniq.job(...)`) enqueue through here too,
 * so there is one enqueue path.
 */
import type { EnqueueOptions, ResolvedSoniqOptions } from "../app/options.js";
import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import type { Job, QueueStats } from "../common/types.js";
import type { NewJob } from "../contract/index.js";
import { type ActorOptions, actorOf, audited, auditRecord } from "../observability/audit.js";
import { produce } from "../observability/tracing.js";
import { prepareJob, resolveTarget, sendEvent, txOptions } from "./definition.js";
import { assertManyOptions, type EnqueueManyItem, prepareManyItem } from "./enqueue-many.js";
import type { Explainer, Explanation } from "./explain.js";
import { inListOrder, jobListQuery, type ListJobsFilter, statsQuery } from "./queries.js";
import {
  type EnqueueHandle,
  enqueueHandle,
  type JobOutcome,
  type ResultWaiters,
  type WaitForOptions,
} from "./results.js";

export class JobService<TTx = unknown> {
  readonly #rt: Runtime;
  readonly #results: ResultWaiters;
  readonly #explainer: Explainer;

  constructor(rt: Runtime, results: ResultWaiters, explainer: Explainer) {
    this.#rt = rt;
    this.#results = results;
    this.#explainer = explainer;
  }

  get #options(): ResolvedSoniqOptions {
    return this.#rt.options;
  }

  /**
   * Enqueues a job by name (strict: the name must be defined on this instance unless `allowUnknownJobNames`).
   * Resolves to `{ id, deduplicated }` with `result()`, the job's terminal outcome.
   */
  // Not async on purpose: when validation is synchronous, backend.enqueue runs inside this call, so a
  // SQLite `tx` insert lands in the caller's (synchronous) transaction before it commits.
  enqueue(name: string, args: unknown, options?: EnqueueOptions<TTx>): Promise<EnqueueHandle> {
    try {
      const { backend } = this.#rt;
      const target = resolveTarget(name, this.#rt.registry, this.#options);
      const tx = txOptions(backend, options?.tx);
      const job = prepareJob(target, args, options, this.#options);
      const write = (j: NewJob) =>
        produce(
          this.#rt.producers,
          () => sendEvent("enqueue", [j]),
          [j],
          () => backend.jobs.enqueue(j, tx),
        ).then((r) => enqueueHandle(r, this.#results));
      return job instanceof Promise ? job.then(write) : write(job);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Enqueues several jobs in one backend call, all or nothing. Every item is validated first; an error
   * names the failing item's index (`context.index`) and nothing is written.
   */
  enqueueMany(items: readonly EnqueueManyItem<TTx>[], options: { tx?: TTx } = {}): Promise<EnqueueHandle[]> {
    // Not async for the same reason as `enqueue`: a SQLite `tx` must see the insert before it commits.
    try {
      if (!Array.isArray(items)) {
        throw new SoniqError(
          "SONIQ_INVALID_ARGUMENT",
          "jobs.enqueueMany() takes an array of { job, args, options }.",
        );
      }
      assertManyOptions(options);
      const { backend } = this.#rt;
      const tx = txOptions(backend, options.tx);
      if (items.length === 0) return Promise.resolve([]);
      const jobs = items.map((item, i) => prepareManyItem(item, i, this.#rt.registry, this.#options));
      const write = (ready: NewJob[]) =>
        produce(
          this.#rt.producers,
          () => sendEvent("enqueue", ready),
          ready,
          () => backend.jobs.enqueueMany(ready, tx),
        ).then((results) => results.map((r) => enqueueHandle(r, this.#results)));
      if (jobs.some((job) => job instanceof Promise)) return Promise.all(jobs).then(write);
      return write(jobs as NewJob[]);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The job, or null when no job has this id (a dead letter is `deadLetters.get`). */
  get(id: string): Promise<Job | null> {
    return this.#rt.backend.jobs.get(id);
  }

  /**
   * Newest first (by id: job ids are UUIDv7, time-ordered); `limit` defaults to 100 (at most 1000).
   * Page with `after: lastJob` (older) or `before: firstJob` (newer); `offset` still works.
   */
  async list(filter?: ListJobsFilter): Promise<Job[]> {
    const query = jobListQuery(filter, "jobs.list(filter)");
    return inListOrder(query, await this.#rt.backend.jobs.list(query));
  }

  /** Exactly `{ total, queued, processing, done, dead_letter, cancelled }`, of one queue or of all. */
  stats(filter?: { queue?: string }): Promise<QueueStats> {
    try {
      return this.#rt.backend.jobs.stats(statsQuery(filter));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Cancels a queued or running job. A running job's `ctx.signal` aborts at once when its worker is in
   * this process, else at that worker's next heartbeat; its late completion is ignored either way.
   * False when the job is missing or already finished.
   */
  async cancel(id: string, options?: ActorOptions): Promise<boolean> {
    const { backend } = this.#rt;
    const record = auditRecord("job.cancel", actorOf(options, "jobs.cancel(options)"), String(id), null);
    const cancelled = await audited(backend, record, (r) => backend.jobs.cancel(id, r), Boolean);
    if (cancelled) for (const worker of this.#rt.workers) worker.cancelLocal(id);
    return cancelled;
  }

  /**
   * Waits for a job's terminal outcome, from any process: `{ status: "done", result }`,
   * `{ status: "dead_letter", reason, lastError }` or `{ status: "cancelled" }`. Rejects with `SONIQ_TIMEOUT`
   * after `timeoutMs`, with `signal.reason` when `signal` aborts, with `SONIQ_JOB_NOT_FOUND` for an id in
   * neither table (a flow step's job id waits for its release). All waiters of this instance share one
   * subscription and one poll loop (results.ts).
   */
  waitFor<TResult = unknown>(id: string, options?: WaitForOptions): Promise<JobOutcome<TResult>> {
    return this.#results.waitFor<TResult>(id, options);
  }

  /** Why this job is (not) running: `{ status, verdict, reasons: [{ code, message, evidence }] }`. Never throws for an unknown id. */
  explain(id: string): Promise<Explanation> {
    return this.#explainer.explain(id);
  }

  /** The names of the jobs defined on this instance, in definition order. */
  names(): string[] {
    return [...this.#rt.registry.keys()];
  }
}
