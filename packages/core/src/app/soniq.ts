/**
 * The Soniq app: one instance owns its backend (guarded), job registry, plugins and workers.
 * Two instances share nothing. See README.md for the options and their defaults.
 */

import type { StandardSchemaV1 } from "@standard-schema/spec";
import { SoniqError } from "../common/errors.js";
import { safeLogger } from "../common/logger.js";
import { assertJobName } from "../common/names.js";
import type { Job, QueueStats } from "../common/types.js";
import type { Backend, BackendTx, MigrationReport, NewJob } from "../contract/index.js";
import { DeadLetterService } from "../dead-letters/service.js";
import { FlowService } from "../flows/service.js";
import {
  type Handler,
  type JobDefinition,
  type JobResult,
  prepareJob,
  type RegisteredJob,
  resolveTarget,
  sendEvent,
  txOptions,
} from "../jobs/definition.js";
import { assertManyOptions, type EnqueueManyItem, prepareManyItem } from "../jobs/enqueue-many.js";
import { Explainer, type Explanation } from "../jobs/explain.js";
import { inListOrder, jobListQuery, type ListJobsFilter, statsQuery } from "../jobs/queries.js";
import {
  type EnqueueHandle,
  enqueueHandle,
  type JobOutcome,
  ResultWaiters,
  type WaitForOptions,
} from "../jobs/results.js";
import { type ActorOptions, AuditService, actorOf, audited, auditRecord } from "../observability/audit.js";
import { type ReplicationStatus, replicationOf } from "../observability/replication.js";
import { MetricsService } from "../observability/series.js";
import { produce } from "../observability/tracing.js";
import { QueueService } from "../queues/service.js";
import { declarePeriodic, type PeriodicDeclaration, type PeriodicOptions } from "../schedules/declare.js";
import { checkDeclaredJob, type ScheduleRuntime } from "../schedules/runtime.js";
import { resolveSchedulerOptions, Scheduler, type SchedulerOptions } from "../schedules/scheduler.js";
import { ScheduleService } from "../schedules/service.js";
import { SchedulingWorker, type WorkerScheduleOptions, workerSchedulerOptions } from "../schedules/worker.js";
import { WebhookDispatch } from "../webhooks/dispatch.js";
import { secretBox } from "../webhooks/secrets.js";
import { WebhookService } from "../webhooks/service.js";
import { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_STALE_AFTER_MS } from "../worker/liveness.js";
import { resolveWorkerOptions, type WorkerOptions } from "../worker/options.js";
import { type WorkersApi, workersApi } from "../worker/service.js";
import { Worker } from "../worker/worker.js";
import { guardBackend } from "./guard.js";
import { type MigrationsApi, migrationsApi } from "./migrations.js";
import {
  type EnqueueOptions,
  type JobOptions,
  type ResolvedSoniqOptions,
  resolveJobOptions,
  resolveSoniqOptions,
  type SoniqOptions,
} from "./options.js";
import { type Middleware, type Plugin, toPlugin } from "./plugins.js";
import { type Runtime, SafeMetrics } from "./runtime.js";

export class Soniq<B extends Backend<unknown> = Backend<unknown>> implements AsyncDisposable {
  /** The resolved, frozen options (defaults filled). */
  readonly options: ResolvedSoniqOptions;
  /** The guarded backend. */
  readonly backend: B;
  readonly deadLetter: DeadLetterService;
  /** Recurring jobs: list, pause, resume, remove, trigger, upcoming, history (from any process). */
  readonly schedules: ScheduleService;
  /** Queue controls: pause, resume, limits (`soniq_queues`). */
  readonly queues: QueueService;
  /** The operator audit log (`soniq_audit_log`). */
  readonly audit: AuditService;
  /** The persisted per-minute counters (`soniq_metrics`). */
  readonly metrics: MetricsService;
  /** The registered workers, each with its derived state (live, stale, stopped). */
  readonly workers: WorkersApi;
  /** The schema's applied and pending migrations. */
  readonly migrations: MigrationsApi;
  /** Workflows: start, get, list, cancel, waitFor (job dependencies that know the dead-letter table). */
  readonly flows: FlowService<BackendTx<B>>;
  /** Webhook endpoints and their deliveries (DESIGN.md section 18). */
  readonly webhooks: WebhookService;
  readonly #explainer: Explainer;
  readonly #rt: Runtime;
  readonly #schedules: ScheduleRuntime;
  readonly #declarations = new Map<string, PeriodicDeclaration>();
  readonly #schedulers = new Set<Scheduler>();
  readonly #registry = new Map<string, RegisteredJob>();
  readonly #results: ResultWaiters;
  #closing: Promise<void> | null = null;

  constructor(options: SoniqOptions<B>) {
    this.options = resolveSoniqOptions(options as SoniqOptions<Backend<unknown>>);
    this.backend = guardBackend(options.backend as Backend<unknown>) as B;
    const logger = safeLogger(this.options.logger);
    this.#rt = {
      backend: this.backend,
      options: this.options,
      logger,
      registry: this.#registry,
      plugins: [],
      middleware: [],
      producers: [],
      workers: new Set(),
      metrics: new SafeMetrics(this.options.metrics, logger),
      webhooks: new WebhookDispatch(this.backend, this.options.webhooks.refreshMs, logger),
      secrets: secretBox(this.options.webhooks.secretKey),
    };
    this.deadLetter = new DeadLetterService(this.#rt);
    this.#schedules = {
      schedules: this.backend.schedules,
      leases: this.backend.leases,
      audit: this.backend.audit,
      declarations: this.#declarations,
      registry: this.#registry,
      options: this.options,
      logger,
      clock: this.options.clock,
      producers: this.#rt.producers,
      webhooks: this.#rt.webhooks,
    };
    this.schedules = new ScheduleService(this.#schedules);
    this.queues = new QueueService(this.backend, () => [
      this.options.defaultQueue,
      ...[...this.#registry.values()].map((job) => job.options.queue),
    ]);
    this.audit = new AuditService(this.backend);
    this.metrics = new MetricsService(this.backend);
    this.workers = workersApi(this.backend, () => this.options.clock.now());
    this.migrations = migrationsApi(this.backend);
    this.#results = new ResultWaiters(this.backend, logger);
    // A cancelled flow's unreleased steps have no job row to notify on: re-read the waited ids at once.
    this.flows = new FlowService(this.#rt, () => this.#results.recheck());
    const { webhooks, secrets } = this.#rt;
    this.webhooks = new WebhookService(this.backend, this.options.webhooks, secrets, webhooks);
    this.#explainer = new Explainer(this.backend, DEFAULT_STALE_AFTER_MS, DEFAULT_HEARTBEAT_INTERVAL_MS);
  }

  /** Creates or upgrades the schema (idempotent). */
  setup(): Promise<MigrationReport> {
    return this.backend.migrations.apply();
  }

  /**
   * Defines a job. With a `schema`, the handler receives the schema's output and `enqueue` takes its
   * input. Names are dotted lowercase and unique per instance.
   */
  job<S extends StandardSchemaV1, TResult = unknown>(
    name: string,
    handler: Handler<StandardSchemaV1.InferOutput<S>, TResult>,
    options: JobOptions<S> & { schema: S },
  ): JobDefinition<StandardSchemaV1.InferInput<S>, JobResult<TResult>, BackendTx<B>>;
  job<TArgs = unknown, TResult = unknown>(
    name: string,
    handler: Handler<TArgs, TResult>,
    options?: JobOptions<undefined>,
  ): JobDefinition<TArgs, JobResult<TResult>, BackendTx<B>>;
  job(
    name: string,
    handler: Handler<unknown, unknown>,
    options?: JobOptions,
  ): JobDefinition<unknown, unknown, BackendTx<B>> {
    assertJobName(name);
    if (typeof handler !== "function") {
      throw new SoniqError("SONIQ_INVALID_ARGUMENT", `job("${name}") needs a handler function.`, {
        context: { name },
      });
    }
    if (this.#registry.has(name)) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `A job named "${name}" is already defined on this instance; each name has one handler.`,
        { context: { name } },
      );
    }
    const resolved = resolveJobOptions(name, options, this.options);
    const registered: RegisteredJob = { name, handler, options: resolved };
    this.#registry.set(name, registered);
    return Object.freeze({
      name,
      options: resolved,
      enqueue: (args: unknown, opts?: EnqueueOptions<BackendTx<B>>) => this.#enqueueOne(name, args, opts),
    });
  }

  /**
   * Declares a recurring job: `{ cron, timezone }` or `{ every }`, with `args`, `name` (default: the job's
   * name), `catchUp`, `queue`, `priority`. Checked now (`SONIQ_INVALID_OPTIONS` names the bad field;
   * `SONIQ_INVALID_ARGUMENT` for a name declared twice); stored when a scheduler starts.
   */
  periodic<TArgs>(
    job: JobDefinition<TArgs, unknown, never> | string,
    options: PeriodicOptions<TArgs>,
  ): PeriodicDeclaration {
    const jobName = typeof job === "string" ? job : job?.name;
    assertJobName(jobName);
    const declaration = declarePeriodic(jobName, options as PeriodicOptions);
    if (this.#declarations.has(declaration.name)) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `A schedule named "${declaration.name}" is already declared on this instance; give the second one a name.`,
        { context: { name: declaration.name } },
      );
    }
    checkDeclaredJob(this.#schedules, declaration);
    this.#declarations.set(declaration.name, declaration);
    return declaration;
  }

  /** A scheduler for this instance's schedules (and every other stored one). Call `start()` on it. */
  scheduler(options: SchedulerOptions = {}): Scheduler {
    if (this.#closing) {
      throw new SoniqError("SONIQ_CLOSED", "Cannot create a scheduler: this Soniq instance was closed.");
    }
    const resolved = resolveSchedulerOptions(options, this.options.clock);
    const scheduler = new Scheduler(this.#schedules, resolved, (s) => this.#schedulers.delete(s));
    this.#schedulers.add(scheduler);
    return scheduler;
  }

  /** Names of the jobs defined on this instance. */
  jobNames(): string[] {
    return [...this.#registry.keys()];
  }

  /** Enqueues by name (strict: the name must be defined here unless `allowUnknownJobNames`). */
  enqueue(name: string, args: unknown, options?: EnqueueOptions<BackendTx<B>>): Promise<EnqueueHandle> {
    return this.#enqueueOne(name, args, options);
  }

  /**
   * Waits for a job's terminal outcome, from any process: `{ status: "done", result }`,
   * `{ status: "dead_letter", reason, lastError }` or `{ status: "cancelled" }`. Rejects with `SONIQ_TIMEOUT`
   * after `timeoutMs`, with `signal.reason` when `signal` aborts, with `SONIQ_JOB_NOT_FOUND` for an id in
   * neither table (a flow step's job id waits for its release). All waiters of this instance share one subscription and one poll loop (results.ts).
   */
  waitFor<TResult = unknown>(id: string, options?: WaitForOptions): Promise<JobOutcome<TResult>> {
    return this.#results.waitFor<TResult>(id, options);
  }

  // Not async on purpose: when validation is synchronous, backend.enqueue runs inside this call, so a
  // SQLite `tx` insert lands in the caller's (synchronous) transaction before it commits.
  #enqueueOne(name: string, args: unknown, options?: EnqueueOptions<BackendTx<B>>): Promise<EnqueueHandle> {
    try {
      const target = resolveTarget(name, this.#registry, this.options);
      const tx = txOptions(this.backend, options?.tx);
      const job = prepareJob(target, args, options, this.options);
      const write = (j: NewJob) =>
        produce(
          this.#rt.producers,
          () => sendEvent("enqueue", [j]),
          [j],
          () => this.backend.jobs.enqueue(j, tx),
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
    items: readonly EnqueueManyItem<BackendTx<B>>[],
    options: { tx?: BackendTx<B> } = {},
  ): Promise<EnqueueHandle[]> {
    // Not async for the same reason as #enqueueOne: a SQLite `tx` must see the insert before it commits.
    try {
      if (!Array.isArray(items)) {
        throw new SoniqError(
          "SONIQ_INVALID_ARGUMENT",
          "enqueueMany() takes an array of { job, args, options }.",
        );
      }
      assertManyOptions(options);
      const tx = txOptions(this.backend, options.tx);
      if (items.length === 0) return Promise.resolve([]);
      const jobs = items.map((item, i) => prepareManyItem(item, i, this.#registry, this.options));
      const write = (ready: NewJob[]) =>
        produce(
          this.#rt.producers,
          () => sendEvent("enqueue", ready),
          ready,
          () => this.backend.jobs.enqueueMany(ready, tx),
        ).then((results) => results.map((r) => enqueueHandle(r, this.#results)));
      if (jobs.some((job) => job instanceof Promise)) return Promise.all(jobs).then(write);
      return write(jobs as NewJob[]);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Why this job is (not) running: `{ status, verdict, reasons: [{ code, message, evidence }] }`. Never throws for an unknown id. */
  explain(id: string): Promise<Explanation> {
    return this.#explainer.explain(id);
  }

  /** Where the operator's reads go (a read replica?) and its lag: `{ readReplica, lagMs }`. */
  replication(): Promise<ReplicationStatus> {
    return replicationOf(this.backend);
  }

  getJob(id: string): Promise<Job | null> {
    return this.backend.jobs.get(id);
  }

  /**
   * Newest first (by id: job ids are UUIDv7, time-ordered); `limit` defaults to 100 (at most 1000).
   * Page with `after: lastJob` (older) or `before: firstJob` (newer); `offset` still works.
   */
  async listJobs(filter?: ListJobsFilter): Promise<Job[]> {
    const query = jobListQuery(filter);
    return inListOrder(query, await this.backend.jobs.list(query));
  }

  /** The stored result of a done job; null when the job is missing, not done, or its row expired. */
  async getResult<T = unknown>(id: string): Promise<T | null> {
    const job = await this.backend.jobs.get(id);
    return job?.status === "done" ? ((job.result ?? null) as T | null) : null;
  }

  /** Exactly `{ total, queued, processing, done, dead_letter, cancelled }`. */
  async getQueueStats(filter?: { queue?: string }): Promise<QueueStats> {
    return this.backend.jobs.stats(statsQuery(filter));
  }

  /**
   * Cancels a queued or running job. A running job's `ctx.signal` aborts at once when its worker is in
   * this process, else at that worker's next heartbeat; its late completion is ignored either way.
   * False when the job is missing or already finished.
   */
  async cancelJob(id: string, options?: ActorOptions): Promise<boolean> {
    const record = auditRecord("job.cancel", actorOf(options, "cancelJob(options)"), String(id), null);
    const cancelled = await audited(this.backend, record, (r) => this.backend.jobs.cancel(id, r), Boolean);
    if (cancelled) for (const worker of this.#rt.workers) worker.cancelLocal(id);
    return cancelled;
  }

  /**
   * Adds hooks (`beforeJob`, `afterJob`, `onError`, `onOutcome`), wrapping middleware and/or a `producer`
   * hook around writes of new jobs (tracing: see tracing.ts). A function is taken as middleware. Order matters: the first registered runs outermost (and its hooks first).
   */
  use(extension: Plugin | Middleware): this {
    const plugin = toPlugin(extension);
    if (plugin.beforeJob || plugin.afterJob || plugin.onError || plugin.onOutcome)
      this.#rt.plugins.push(plugin);
    if (plugin.producer) this.#rt.producers.push(plugin.producer);
    if (plugin.middleware) this.#rt.middleware = [...this.#rt.middleware, plugin.middleware];
    return this;
  }

  /**
   * A worker for this instance's jobs. Call `start()` (or `runOnce()`) on it. With `schedules: true` (or
   * `{ checkIntervalMs }`) it also runs a scheduler, started and stopped with it.
   */
  worker(options?: WorkerOptions & WorkerScheduleOptions): Worker {
    if (this.#closing) {
      throw new SoniqError("SONIQ_CLOSED", "Cannot create a worker: this Soniq instance was closed.");
    }
    if (
      options !== undefined &&
      (typeof options !== "object" || options === null || Array.isArray(options))
    ) {
      return new Worker(this.#rt, resolveWorkerOptions(options)); // throws SONIQ_INVALID_OPTIONS
    }
    const { schedules, ...rest } = options ?? {};
    const resolved = resolveWorkerOptions(options === undefined ? undefined : rest);
    const schedulerOptions = workerSchedulerOptions(schedules);
    if (schedulerOptions === null) return new Worker(this.#rt, resolved);
    return new SchedulingWorker(this.#rt, resolved, this.scheduler(schedulerOptions));
  }

  /** Stops every started worker of this instance, then closes the backend. Memoised. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    const workers = [...this.#rt.workers].filter((w): w is Worker => w instanceof Worker);
    const results = await Promise.allSettled([
      ...workers.map((w) => w.stop()),
      ...[...this.#schedulers].map((s) => s.stop()),
    ]);
    results.push(...(await Promise.allSettled([this.#results.close()])));
    results.push(...(await Promise.allSettled([this.backend.close()])));
    const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "Soniq.close(): several cleanup steps failed");
  }
}
