/**
 * Options objects for the public constructors and calls: each is validated once, with every problem
 * reported in one `SONIQ_INVALID_OPTIONS` error (`context.problems`), defaults filled, and frozen.
 */

import { hostname } from "node:os";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Backend } from "./backend.js";
import { SoniqError } from "./errors.js";
import { isLogger, type Logger, silentLogger } from "./logger.js";
import { isMetricsSink, type MetricsSink, noopMetricsSink } from "./metrics.js";
import { QUEUE_NAME_PATTERN } from "./names.js";
import { DEFAULT_RETRY, type RetryPolicy, retryPolicyProblems } from "./retry-policy.js";
import { type Clock, isClock, systemClock } from "./schedules/clock.js";
import { JOB_DEFAULTS } from "./schema/constants.js";

export interface SoniqOptions<B extends Backend<unknown> = Backend<unknown>> {
  /** Storage: `memoryBackend()`, `sqliteBackend({...})`, `postgresBackend({...})` or your own. */
  backend: B;
  /** pino-compatible logger. Default: silent. */
  logger?: Logger;
  /** Where job metrics go. Default: a no-op sink. */
  metrics?: MetricsSink;
  /** Accept `enqueue(name)` / `deadLetter.replay` for names with no local `job(...)`. Default false. */
  allowUnknownJobNames?: boolean;
  /** Queue of jobs that name none. Default "default". */
  defaultQueue?: string;
  /** Priority of jobs that name none (lower runs first). Default 100. */
  defaultPriority?: number;
  /** Runs per job (first run included) unless the job says otherwise. Default 3. */
  defaultMaxAttempts?: number;
  /** Handler time limit unless the job says otherwise; 0 = none. Default 300_000 (5 min). */
  defaultTimeoutMs?: number;
  /** How long done rows (and their results) are kept unless the job says otherwise; 0 deletes at once. Default 300_000. */
  resultTtlMs?: number;
  /** Retry policy unless the job says otherwise. Default exponential, 1 s base, 1 h cap, full jitter. */
  retry?: RetryPolicy;
  /** Longest snooze honoured; longer ones are capped (with a warning). Default 86_400_000 (24 h). */
  maxSnoozeMs?: number;
  /** Stamped on enqueued rows. Default `<hostname>:<pid>`; null stores nothing. */
  producerId?: string | null;
  /**
   * Where recurring jobs read the time (`soniq.schedules`, and schedulers that name no clock). Default
   * the system clock; tests pass `manualClock()`.
   */
  clock?: Clock;
}

export interface ResolvedSoniqOptions {
  readonly logger: Logger;
  readonly metrics: MetricsSink;
  readonly allowUnknownJobNames: boolean;
  readonly defaultQueue: string;
  readonly defaultPriority: number;
  readonly defaultMaxAttempts: number;
  readonly defaultTimeoutMs: number;
  readonly resultTtlMs: number;
  readonly retry: RetryPolicy;
  readonly maxSnoozeMs: number;
  readonly producerId: string | null;
  readonly clock: Clock;
}

export interface JobOptions<S extends StandardSchemaV1 | undefined = StandardSchemaV1 | undefined> {
  /** Default: the instance's `defaultQueue`. */
  queue?: string;
  /** Default: the instance's `defaultPriority`. Lower runs first. */
  priority?: number;
  /** Runs, first included. Default: the instance's `defaultMaxAttempts`. */
  maxAttempts?: number;
  /** 0 = no limit. Default: the instance's `defaultTimeoutMs`. */
  timeoutMs?: number;
  /** Default: the instance's `retry`. */
  retry?: RetryPolicy;
  /** Default: the instance's `resultTtlMs`. */
  resultTtlMs?: number;
  /** Any Standard Schema validator (zod, valibot, arktype...). */
  schema?: S;
  /** Deduplicate on (name, canonical args hash) while a queued copy exists. Default false. */
  unique?: boolean;
}

export interface ResolvedJobOptions {
  readonly queue: string;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly resultTtlMs: number;
  readonly schema: StandardSchemaV1 | undefined;
  readonly unique: boolean;
}

export interface EnqueueOptions<TTx = unknown> {
  /** When the job becomes due. Exclusive with `delayMs`. Default: now (the backend's clock). */
  runAt?: Date;
  /** Due this many ms from now (this process's clock). Exclusive with `runAt`. */
  delayMs?: number;
  priority?: number;
  queue?: string;
  /** While a queued job with this key exists, enqueue returns it (`deduplicated: true`). */
  dedupKey?: string;
  /** Overrides the job's `unique` for this enqueue. */
  unique?: boolean;
  /** Write inside the caller's transaction (backends with `capabilities.transactionalEnqueue`). */
  tx?: TTx;
}

export interface WorkerOptions {
  /** Queues to take jobs from. Default: every queue. An empty list is rejected. */
  queues?: readonly string[];
  /** Handlers run at once. Default 10. */
  concurrency?: number;
  /** Claimed-but-not-started jobs kept locally, at first and whenever the queue runs dry. Default: `concurrency`. */
  batchSize?: number;
  /**
   * Upper bound of the adaptive claim window: while jobs finish faster than a claim round trip refills
   * them, the window grows (4x per claim) up to this. Default: `max(batchSize, 500)`; set it to `batchSize` to fix the window.
   */
  maxBatchSize?: number;
  /** Completions written per backend call at most. Default 500. */
  completeBatchSize?: number;
  /** Idle polling period (± 20 % jitter); notifications wake the worker sooner. Default 1000. */
  pollIntervalMs?: number;
  /** Default 5000. Must be below `staleAfterMs`. */
  heartbeatIntervalMs?: number;
  /** A peer whose heartbeat is older than this is stale; its jobs are requeued. Default 300_000. */
  staleAfterMs?: number;
  /** How often one worker (holding the maintenance lease) recovers stale peers and deletes expired rows. Default 60_000. */
  maintenanceIntervalMs?: number;
  /** How long `stop()` waits for running handlers before aborting and giving their jobs back. Default 30_000. */
  shutdownTimeoutMs?: number;
  /** Stored on the worker row. Default null. */
  metadata?: Record<string, unknown> | null;
}

export type ResolvedWorkerOptions = Readonly<
  Required<Omit<WorkerOptions, "queues" | "metadata">> & {
    queues: readonly string[] | null;
    metadata: Record<string, unknown> | null;
  }
>;

type Check = (problems: string[], value: unknown, label: string) => void;

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);
const intIn =
  (min: number, max: number): Check =>
  (problems, v, label) => {
    if (v !== undefined && (!isInt(v) || v < min || v > max)) {
      problems.push(`${label} must be an integer from ${min} to ${max} (got ${String(v)})`);
    }
  };
const msAtLeast =
  (min: number): Check =>
  (problems, v, label) => {
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < min)) {
      problems.push(`${label} must be a number of milliseconds >= ${min} (got ${String(v)})`);
    }
  };
const checkQueue: Check = (problems, v, label) => {
  if (v !== undefined && (typeof v !== "string" || !QUEUE_NAME_PATTERN.test(v) || v.length > 255)) {
    problems.push(
      `${label} must be a dotted lowercase name like "default" or "emails.bulk" (got ${String(v)})`,
    );
  }
};
const checkBool: Check = (problems, v, label) => {
  if (v !== undefined && typeof v !== "boolean") problems.push(`${label} must be a boolean`);
};
const priority = intIn(-2_147_483_648, 2_147_483_647);
const maxAttempts = intIn(1, 1_000_000);
const MAX_TIMER_MS = 2_147_483_647;

export function fail(what: string, problems: string[]): never {
  throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid ${what}: ${problems.join("; ")}.`, {
    context: { problems },
  });
}

function unknownKeys(problems: string[], options: object, allowed: readonly string[], what: string): void {
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) problems.push(`${what} has no option "${key}"`);
  }
}

export function resolveSoniqOptions(options: SoniqOptions<Backend<unknown>>): ResolvedSoniqOptions {
  if (typeof options !== "object" || options === null) fail("Soniq options", ["pass an options object"]);
  const o = options;
  const problems: string[] = [];
  unknownKeys(problems, o, SONIQ_OPTION_KEYS, "new Soniq()");
  if (typeof o.backend !== "object" || o.backend === null) problems.push("backend is required");
  if (o.logger !== undefined && !isLogger(o.logger))
    problems.push("logger needs debug, info, warn and error");
  if (o.metrics !== undefined && !isMetricsSink(o.metrics)) {
    problems.push("metrics needs recordJobStart and recordJobEnd");
  }
  checkBool(problems, o.allowUnknownJobNames, "allowUnknownJobNames");
  checkQueue(problems, o.defaultQueue, "defaultQueue");
  priority(problems, o.defaultPriority, "defaultPriority");
  maxAttempts(problems, o.defaultMaxAttempts, "defaultMaxAttempts");
  intIn(0, MAX_TIMER_MS)(problems, o.defaultTimeoutMs, "defaultTimeoutMs");
  intIn(0, Number.MAX_SAFE_INTEGER)(problems, o.resultTtlMs, "resultTtlMs");
  if (o.retry !== undefined) problems.push(...retryPolicyProblems(o.retry, "retry"));
  intIn(0, Number.MAX_SAFE_INTEGER)(problems, o.maxSnoozeMs, "maxSnoozeMs");
  if (o.producerId !== undefined && o.producerId !== null && typeof o.producerId !== "string") {
    problems.push("producerId must be a string or null");
  }
  if (o.clock !== undefined && !isClock(o.clock))
    problems.push("clock needs now() and setTimer(callback, ms)");
  if (problems.length > 0) fail("Soniq options", problems);
  return Object.freeze({
    logger: o.logger ?? silentLogger,
    metrics: o.metrics ?? noopMetricsSink,
    allowUnknownJobNames: o.allowUnknownJobNames ?? false,
    defaultQueue: o.defaultQueue ?? JOB_DEFAULTS.queue,
    defaultPriority: o.defaultPriority ?? JOB_DEFAULTS.priority,
    defaultMaxAttempts: o.defaultMaxAttempts ?? JOB_DEFAULTS.maxAttempts,
    defaultTimeoutMs: o.defaultTimeoutMs ?? 300_000,
    resultTtlMs: o.resultTtlMs ?? 300_000,
    retry: o.retry ?? DEFAULT_RETRY,
    maxSnoozeMs: o.maxSnoozeMs ?? 86_400_000,
    producerId: o.producerId === undefined ? `${hostname()}:${process.pid}` : o.producerId,
    clock: o.clock ?? systemClock,
  });
}

const SONIQ_OPTION_KEYS = [
  "backend",
  "logger",
  "metrics",
  "allowUnknownJobNames",
  "defaultQueue",
  "defaultPriority",
  "defaultMaxAttempts",
  "defaultTimeoutMs",
  "resultTtlMs",
  "retry",
  "maxSnoozeMs",
  "producerId",
  "clock",
] as const;

const JOB_OPTION_KEYS = [
  "queue",
  "priority",
  "maxAttempts",
  "timeoutMs",
  "retry",
  "resultTtlMs",
  "schema",
  "unique",
] as const;

export function resolveJobOptions(
  name: string,
  options: JobOptions | undefined,
  defaults: ResolvedSoniqOptions,
): ResolvedJobOptions {
  const o = options ?? {};
  const problems: string[] = [];
  unknownKeys(problems, o, JOB_OPTION_KEYS, `job("${name}")`);
  checkQueue(problems, o.queue, "queue");
  priority(problems, o.priority, "priority");
  maxAttempts(problems, o.maxAttempts, "maxAttempts");
  intIn(0, MAX_TIMER_MS)(problems, o.timeoutMs, "timeoutMs");
  intIn(0, Number.MAX_SAFE_INTEGER)(problems, o.resultTtlMs, "resultTtlMs");
  if (o.retry !== undefined) problems.push(...retryPolicyProblems(o.retry, "retry"));
  checkBool(problems, o.unique, "unique");
  if (o.schema !== undefined) {
    const std = (o.schema as { "~standard"?: { validate?: unknown } } | null)?.["~standard"];
    if (typeof std?.validate !== "function") problems.push("schema must be a Standard Schema validator");
  }
  if (problems.length > 0) fail(`options for job "${name}"`, problems);
  return Object.freeze({
    queue: o.queue ?? defaults.defaultQueue,
    priority: o.priority ?? defaults.defaultPriority,
    maxAttempts: o.maxAttempts ?? defaults.defaultMaxAttempts,
    timeoutMs: o.timeoutMs ?? defaults.defaultTimeoutMs,
    retry: o.retry ?? defaults.retry,
    resultTtlMs: o.resultTtlMs ?? defaults.resultTtlMs,
    schema: o.schema,
    unique: o.unique ?? false,
  });
}

const ENQUEUE_OPTION_KEYS = ["runAt", "delayMs", "priority", "queue", "dedupKey", "unique", "tx"] as const;

/** Problems with enqueue options (empty when valid). Kept allocation-free on the happy path. */
export function enqueueOptionProblems(o: EnqueueOptions): string[] {
  const problems: string[] = [];
  unknownKeys(problems, o, ENQUEUE_OPTION_KEYS, "enqueue()");
  if (o.runAt !== undefined && (!(o.runAt instanceof Date) || Number.isNaN(o.runAt.getTime()))) {
    problems.push("runAt must be a valid Date");
  }
  msAtLeast(0)(problems, o.delayMs, "delayMs");
  if (o.runAt !== undefined && o.delayMs !== undefined) problems.push("pass runAt or delayMs, not both");
  priority(problems, o.priority, "priority");
  checkQueue(problems, o.queue, "queue");
  if (o.dedupKey !== undefined && (typeof o.dedupKey !== "string" || o.dedupKey.length === 0)) {
    problems.push("dedupKey must be a non-empty string");
  }
  checkBool(problems, o.unique, "unique");
  return problems;
}

const WORKER_OPTION_KEYS = [
  "queues",
  "concurrency",
  "batchSize",
  "maxBatchSize",
  "completeBatchSize",
  "pollIntervalMs",
  "heartbeatIntervalMs",
  "staleAfterMs",
  "maintenanceIntervalMs",
  "shutdownTimeoutMs",
  "metadata",
] as const;

export function resolveWorkerOptions(options: WorkerOptions | undefined): ResolvedWorkerOptions {
  const o = options ?? {};
  const problems: string[] = [];
  unknownKeys(problems, o, WORKER_OPTION_KEYS, "worker()");
  if (o.queues !== undefined) {
    if (!Array.isArray(o.queues) || o.queues.length === 0) {
      problems.push("queues must be a non-empty array of queue names (omit it for every queue)");
    } else {
      for (const [i, q] of o.queues.entries()) checkQueue(problems, q, `queues[${i}]`);
    }
  }
  intIn(1, 10_000)(problems, o.concurrency, "concurrency");
  intIn(1, 10_000)(problems, o.batchSize, "batchSize");
  intIn(1, 10_000)(problems, o.maxBatchSize, "maxBatchSize");
  intIn(1, 10_000)(problems, o.completeBatchSize, "completeBatchSize");
  intIn(1, MAX_TIMER_MS)(problems, o.pollIntervalMs, "pollIntervalMs");
  intIn(1, MAX_TIMER_MS)(problems, o.heartbeatIntervalMs, "heartbeatIntervalMs");
  intIn(1, Number.MAX_SAFE_INTEGER)(problems, o.staleAfterMs, "staleAfterMs");
  intIn(1, MAX_TIMER_MS)(problems, o.maintenanceIntervalMs, "maintenanceIntervalMs");
  intIn(0, MAX_TIMER_MS)(problems, o.shutdownTimeoutMs, "shutdownTimeoutMs");
  if (o.metadata !== undefined && o.metadata !== null && typeof o.metadata !== "object") {
    problems.push("metadata must be an object or null");
  }
  const heartbeat = o.heartbeatIntervalMs ?? 5000;
  const stale = o.staleAfterMs ?? 300_000;
  if (isInt(heartbeat) && isInt(stale) && heartbeat >= stale) {
    problems.push(`heartbeatIntervalMs (${heartbeat}) must be below staleAfterMs (${stale})`);
  }
  if (problems.length > 0) fail("worker options", problems);
  const concurrency = o.concurrency ?? 10;
  const batchSize = o.batchSize ?? concurrency;
  const maxBatchSize = o.maxBatchSize ?? Math.max(batchSize, 500);
  if (maxBatchSize < batchSize)
    fail("worker options", [`maxBatchSize (${maxBatchSize}) must be >= batchSize (${batchSize})`]);
  return Object.freeze({
    queues: o.queues ? Object.freeze([...new Set(o.queues)]) : null,
    concurrency,
    batchSize,
    maxBatchSize,
    completeBatchSize: o.completeBatchSize ?? 500,
    pollIntervalMs: o.pollIntervalMs ?? 1000,
    heartbeatIntervalMs: heartbeat,
    staleAfterMs: stale,
    maintenanceIntervalMs: o.maintenanceIntervalMs ?? 60_000,
    shutdownTimeoutMs: o.shutdownTimeoutMs ?? 30_000,
    metadata: o.metadata ?? null,
  });
}
