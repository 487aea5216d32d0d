/**
 * The options objects' types, as users write them and as core resolves them. What each option checks,
 * defaults to and means is declared once, in the tables of options.ts.
 */

import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Backend } from "./backend.js";
import type { Logger } from "./logger.js";
import type { MetricsSink } from "./metrics.js";
import type { RetryPolicy } from "./retry-policy.js";
import type { Clock } from "./schedules/clock.js";

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
  /** The job's group on its queue: the queue's `groupConcurrency` caps processing jobs per group. */
  group?: string;
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
  /** A peer whose heartbeat is older than this is stale; its jobs are requeued. Default 60_000 (see liveness.ts). */
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
