/**
 * `soniq.jobs`: enqueue jobs (one or many, by name), read and list them, count them, cancel one, wait for
 * one's outcome and ask why one is (not) running. Job definitions (`soniq.job(...)`) enqueue through here too,
 * so there is one enqueue path.
 */

import { unsupported } from "../app/guard.js";
import type { EnqueueOptions, ResolvedSoniqOptions } from "../app/options.js";
import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import { isJobId, newJobId } from "../common/ids.js";
import { checkJson } from "../common/json.js";
import { JOB_NAME_PATTERN } from "../common/names.js";
import type { Job, JobStep, QueueStats } from "../common/types.js";
import type { NewJob, SignalRequest } from "../contract/index.js";
import { type ActorOptions, actorOf, audited, auditRecord, recordAudit } from "../observability/audit.js";
import { produce } from "../observability/tracing.js";
import { MAX_SIGNAL_PAYLOAD_BYTES } from "../steps/run.js";
import { enqueueBackendOptions, prepareJob, resolveTarget, sendEvent } from "./definition.js";
import {
  assertManyOptions,
  type EnqueueManyItem,
  type EnqueueManyOptions,
  prepareManyItem,
} from "./enqueue-many.js";
import type { Explainer, Explanation } from "./explain.js";
import { inListOrder, jobListQuery, type ListJobsFilter, statsQuery } from "./queries.js";
import {
  type EnqueueHandle,
  enqueueHandle,
  type JobOutcome,
  type ResultWaiters,
  type WaitForOptions,
} from "./results.js";
import { type UpgradeOptions, type UpgradeResult, upgradeJobs } from "./upgrade.js";

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
      const tx = enqueueBackendOptions(backend, options?.tx, options?.durability, this.#options);
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
  enqueueMany(
    items: readonly EnqueueManyItem<TTx>[],
    options: EnqueueManyOptions<TTx> = {},
  ): Promise<EnqueueHandle[]> {
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
      const tx = enqueueBackendOptions(backend, options.tx, options.durability, this.#options);
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

  /**
   * Sends a signal to a job (DESIGN.md section 19): stored in its mailbox (buffered: a signal sent before the job
   * waits is kept) and, when the job waits on that name, the job is made due now and a worker woken, in one
   * transaction; audited `job.signal`. `key` makes a resend a no-op (`duplicate`). A dead letter's signal is
   * stored and carried by its replay. Rejects with `SONIQ_JOB_NOT_FOUND` for an unknown id, `SONIQ_JOB_FINISHED`
   * for a done or cancelled job, `SONIQ_INVALID_ARGUMENT` for a payload that is not JSON or over 64 KiB.
   */
  async signal(id: string, name: string, payload?: unknown, options?: SignalOptions): Promise<SignalSent> {
    const { backend } = this.#rt;
    const request = signalRequest(id, name, payload, options);
    const actor = actorOf(options, "jobs.signal(options)", ["key"]);
    if (!backend.supports("steps")) throw unsupported(backend.name, "steps", "jobs.signal");
    const params = { name: request.name, key: request.key, bytes: request.bytes };
    const record = auditRecord("job.signal", actor, String(id), params);
    const result = !isJobId(id)
      ? await recordAudit(backend, { ...record, outcome: "not_found" }).then(() => ({
          outcome: "not_found" as const,
        }))
      : await audited(
          backend,
          record,
          (r) => backend.steps.signal(request.request, r),
          (r) => r.outcome === "stored",
          (r) => r.outcome,
        );
    switch (result.outcome) {
      case "not_found":
        throw new SoniqError(
          "SONIQ_JOB_NOT_FOUND",
          `jobs.signal: no job or dead letter has the id ${String(id)}.`,
          {
            context: { id },
          },
        );
      case "finished":
        throw new SoniqError(
          "SONIQ_JOB_FINISHED",
          `jobs.signal: job ${String(id)} is ${result.status}; the signal "${request.name}" was not stored.`,
          { context: { id, status: result.status, name: request.name } },
        );
      case "duplicate":
        return { status: "duplicate", woke: false, deadLetter: false };
      case "stored":
        if (result.woke) for (const worker of this.#rt.workers) worker.nudge();
        return { status: "stored", woke: result.woke, deadLetter: result.deadLetter };
    }
  }

  /**
   * A job's (or dead letter's) durable-step checkpoints in the order they were first written: `[{ name, kind,
   * state, value, error, attempt, startedAt, finishedAt, wakeAt }]`; empty for an unknown id.
   */
  steps(id: string): Promise<JobStep[]> {
    const { backend } = this.#rt;
    if (!isJobId(id)) return Promise.resolve([]);
    if (!backend.supports("steps")) return Promise.reject(unsupported(backend.name, "steps", "jobs.steps"));
    return backend.steps.list(id.toLowerCase());
  }

  /**
   * Rewrites the queued jobs and dead letters of a job defined here whose args are older than its `version`
   * (DESIGN.md section 20): through its upcasters, then its schema, in batches; a row that fails either is left as
   * it was and reported (`failed`, the first 20 in `failures`). `dryRun` writes nothing and reports the same
   * counts. Audited `job.upgrade` (counts only). Rejects with `SONIQ_UNKNOWN_TASK_NAME` for a name not defined on
   * this instance (the upgrade needs its upcasters) and `SONIQ_UNSUPPORTED` on a backend without `versions`.
   */
  upgrade(name: string, options?: UpgradeOptions): Promise<UpgradeResult> {
    return upgradeJobs(this.#rt, name, options);
  }

  /** The names of the jobs defined on this instance, in definition order. */
  names(): string[] {
    return [...this.#rt.registry.keys()];
  }
}

/** `jobs.signal`'s options. */
export interface SignalOptions extends ActorOptions {
  /** A resend with the same key to the same job is a no-op (`status: "duplicate"`). At most 512 characters. */
  key?: string;
}

/** What `jobs.signal` did. */
export interface SignalSent {
  /** `stored`: a new signal; `duplicate`: its key was seen, nothing changed. */
  status: "stored" | "duplicate";
  /** The job waited on that name and was made due now. */
  woke: boolean;
  /** The id is a dead letter's: the signal waits for its replay. */
  deadLetter: boolean;
}

/** The signal, checked (name, key, payload) before anything is written. */
function signalRequest(
  id: string,
  name: unknown,
  payload: unknown,
  options: SignalOptions | undefined,
): { request: SignalRequest; name: string; key: string | null; bytes: number } {
  if (typeof name !== "string" || !JOB_NAME_PATTERN.test(name) || name.length > 200) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `jobs.signal(id, name): the name must match ${JOB_NAME_PATTERN} (at most 200 characters).`,
      { context: { field: "name" } },
    );
  }
  const key = (options as { key?: unknown } | undefined)?.key;
  if (
    key !== undefined &&
    (typeof key !== "string" || key.length === 0 || key.length > 512 || key.includes("\0"))
  ) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      "jobs.signal(options.key): a non-empty string of at most 512 characters, without a NUL.",
      { context: { field: "key" } },
    );
  }
  const json = checkJson(payload === undefined ? null : payload);
  if (!json.ok) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `jobs.signal(payload): ${json.problem.problem} at ${json.problem.path}; nothing was stored.`,
      { context: { field: "payload", path: json.problem.path } },
    );
  }
  const text = JSON.stringify(json.value);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_SIGNAL_PAYLOAD_BYTES) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `jobs.signal(payload): ${bytes} bytes as JSON, more than ${MAX_SIGNAL_PAYLOAD_BYTES} (64 KiB); nothing was stored.`,
      { context: { field: "payload", bytes, limit: MAX_SIGNAL_PAYLOAD_BYTES } },
    );
  }
  const request: SignalRequest = {
    jobId: isJobId(id) ? id.toLowerCase() : String(id),
    name,
    payload: JSON.parse(text) as unknown,
    key: key ?? null,
    id: newJobId(),
  };
  return { request, name, key: key ?? null, bytes };
}
