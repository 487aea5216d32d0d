/**
 * The Soniq app: one instance owns its backend (guarded), job registry, plugins and workers. What defines or
 * runs things sits on the instance (`job`, `worker`, `scheduler`, `use`, `setup`, `close`); everything else is a
 * noun with the same verbs (`soniq.jobs.get`, `soniq.deadLetters.replay`, `soniq.queues.pause`, ...). Two
 * instances share nothing. See README.md for the options and their defaults.
 */

import type { StandardSchemaV1 } from "@standard-schema/spec";
import { SoniqError } from "../common/errors.js";
import { safeLogger } from "../common/logger.js";
import { assertJobName } from "../common/names.js";
import type {
  Backend,
  BackendTx,
  CapabilityFacetName,
  GuardedBackend,
  MigrationReport,
} from "../contract/index.js";
import { DeadLetterService } from "../dead-letters/service.js";
import { FlowService } from "../flows/service.js";
import type { Handler, JobDefinition, JobResult, RegisteredJob } from "../jobs/definition.js";
import { Explainer } from "../jobs/explain.js";
import { ResultWaiters } from "../jobs/results.js";
import { JobService } from "../jobs/service.js";
import { AuditService } from "../observability/audit.js";
import { ReplicationService } from "../observability/replication.js";
import { MetricsService } from "../observability/series.js";
import { QueueService } from "../queues/service.js";
import type { DeclaredSchedule } from "../schedules/declare.js";
import { resolveSchedulerOptions, Scheduler, type SchedulerOptions } from "../schedules/scheduler.js";
import { ScheduleService } from "../schedules/service.js";
import { SchedulingWorker, type WorkerScheduleOptions, workerSchedulerOptions } from "../schedules/worker.js";
import { WebhookDispatch } from "../webhooks/dispatch.js";
import { secretBox } from "../webhooks/secrets.js";
import { WebhookService } from "../webhooks/service.js";
import { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_STALE_AFTER_MS } from "../worker/liveness.js";
import { resolveWorkerOptions, type WorkerOptions } from "../worker/options.js";
import { WorkerService } from "../worker/service.js";
import { Worker } from "../worker/worker.js";
import { guardBackend, refusingService, unsupported } from "./guard.js";
import { MigrationService } from "./migrations.js";
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
  /**
   * The guarded backend (every facet present; a capability the backend does not declare rejects with
   * `SONIQ_UNSUPPORTED`, and `supports()` tells which it declares). Applications use the nouns below; this is
   * for backend tests and tools.
   */
  readonly backend: GuardedBackend<BackendTx<B>>;
  /** Jobs: enqueue, enqueueMany, get, list, stats, cancel, waitFor, explain. */
  readonly jobs: JobService<BackendTx<B>>;
  /** Dead letters: list, get, replay, replayWhere, purge, purgeWhere, export. */
  readonly deadLetters: DeadLetterService;
  /** Recurring jobs: declare in code; list, get, pause, resume, remove, trigger, upcoming, history from any process. */
  readonly schedules: ScheduleService;
  /** Queue controls: list, get, pause, resume, configure (`soniq_queues`). */
  readonly queues: QueueService;
  /** Workflows: start, get, list, cancel, waitFor (job dependencies that know the dead-letter table). */
  readonly flows: FlowService<BackendTx<B>>;
  /** The registered workers, each with its derived state (live, stale, stopped). */
  readonly workers: WorkerService;
  /** The schema's applied and pending migrations (`setup()` applies them). */
  readonly migrations: MigrationService;
  /** The operator audit log (`soniq_audit_log`). */
  readonly audit: AuditService;
  /** The persisted per-minute counters (`soniq_metrics`). */
  readonly metrics: MetricsService;
  /** Webhook endpoints and their deliveries (DESIGN.md section 18). */
  readonly webhooks: WebhookService;
  /** Where the operator's reads go (a read replica?) and its lag. */
  readonly replication: ReplicationService;
  readonly #rt: Runtime;
  readonly #schedulers = new Set<Scheduler>();
  readonly #results: ResultWaiters;
  #closing: Promise<void> | null = null;

  constructor(options: SoniqOptions<B>) {
    this.options = resolveSoniqOptions(options as SoniqOptions<Backend<unknown>>);
    const backend = guardBackend(options.backend as Backend<unknown>);
    this.backend = backend as unknown as GuardedBackend<BackendTx<B>>;
    const logger = safeLogger(this.options.logger);
    const registry = new Map<string, RegisteredJob>();
    this.#rt = {
      backend: backend,
      options: this.options,
      logger,
      registry,
      declarations: new Map<string, DeclaredSchedule>(),
      plugins: [],
      middleware: [],
      producers: [],
      workers: new Set(),
      metrics: new SafeMetrics(this.options.metrics, logger),
      webhooks: new WebhookDispatch(backend, this.options.webhooks.refreshMs, logger),
      secrets: secretBox(this.options.webhooks.secretKey),
    };
    this.#results = new ResultWaiters(backend, logger);
    const explainer = new Explainer(backend, DEFAULT_STALE_AFTER_MS, DEFAULT_HEARTBEAT_INTERVAL_MS);
    this.jobs = new JobService(this.#rt, this.#results, explainer);
    this.deadLetters = new DeadLetterService(this.#rt);
    this.schedules = new ScheduleService(this.#rt);
    // A noun whose capability the backend does not declare refuses every call with SONIQ_UNSUPPORTED (before
    // it reads its arguments); `schedules` stays, so `schedules.declare()` works and `setup()` refuses.
    const noun = <T extends object>(capability: CapabilityFacetName, service: T): T =>
      backend.supports(capability) ? service : refusingService(service, backend.name, capability);
    this.queues = noun(
      "queues",
      new QueueService(backend, () => [
        this.options.defaultQueue,
        ...[...registry.values()].map((job) => job.options.queue),
      ]),
    );
    // A cancelled flow's unreleased steps have no job row to notify on: re-read the waited ids at once.
    this.flows = noun("flows", new FlowService(this.#rt, () => this.#results.recheck()));
    this.workers = new WorkerService(backend, () => this.options.clock.now());
    this.migrations = new MigrationService(backend);
    this.audit = noun("audit", new AuditService(backend));
    this.metrics = noun("metrics", new MetricsService(backend));
    this.webhooks = noun(
      "webhooks",
      new WebhookService(backend, this.options.webhooks, this.#rt.secrets, this.#rt.webhooks),
    );
    this.replication = new ReplicationService(backend);
  }

  /**
   * Creates or upgrades the schema (idempotent). Refuses with `SONIQ_UNSUPPORTED` (capability `schedules`) when
   * schedules are declared and the backend keeps no schedules.
   */
  async setup(): Promise<MigrationReport> {
    if (this.#rt.declarations.size > 0 && !this.#rt.backend.supports("schedules")) {
      throw unsupported(this.#rt.backend.name, "schedules", "schedules.declare");
    }
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
    const registry = this.#rt.registry as Map<string, RegisteredJob>;
    if (registry.has(name)) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `A job named "${name}" is already defined on this instance; each name has one handler.`,
        { context: { name } },
      );
    }
    const resolved = resolveJobOptions(name, options, this.options);
    registry.set(name, { name, handler, options: resolved });
    return Object.freeze({
      name,
      options: resolved,
      enqueue: (args: unknown, opts?: EnqueueOptions<BackendTx<B>>) => this.jobs.enqueue(name, args, opts),
    });
  }

  /** A scheduler for this instance's schedules (and every other stored one). Call `start()` on it. */
  scheduler(options: SchedulerOptions = {}): Scheduler {
    if (this.#closing) {
      throw new SoniqError("SONIQ_CLOSED", "Cannot create a scheduler: this Soniq instance was closed.");
    }
    const resolved = resolveSchedulerOptions(options, this.options.clock);
    const scheduler = new Scheduler(this.#rt, resolved, (s) => this.#schedulers.delete(s));
    this.#schedulers.add(scheduler);
    return scheduler;
  }

  /**
   * Adds hooks (`beforeJob`, `afterJob`, `onError`, `onOutcome`), wrapping middleware and/or a `producer`
   * hook around writes of new jobs (tracing: see tracing.ts). A function is taken as middleware. Order matters: the first registered runs outermost (and its hooks first).
   */
  use(extension: Plugin | Middleware): this {
    const plugin = toPlugin(extension);
    plugin.attach?.(this);
    if (plugin.beforeJob || plugin.afterJob || plugin.onError || plugin.onOutcome || plugin.step)
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
