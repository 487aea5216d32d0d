/**
 * Options objects for the public constructors and calls: each is validated once, with every problem
 * reported in one `SONIQ_INVALID_OPTIONS` error (`context.problems`), defaults filled, and frozen.
 * Each options object has one table (SONIQ_OPTIONS, JOB_OPTIONS, ENQUEUE_OPTIONS here; WORKER_OPTIONS in
 * worker-options.ts) that declares every option once: its type as users write it and as core resolves it,
 * its check, its default, and its README line (`describeOptions()`; a test holds packages/core/README.md to
 * it). The options types (`SoniqOptions`, `ResolvedSoniqOptions`, ...) are derived from the tables.
 */
import { hostname } from "node:os";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { type Clock, isClock, systemClock } from "../common/clock.js";
import { SoniqError } from "../common/errors.js";
import { storableText } from "../common/json.js";
import { isLogger, type Logger, silentLogger } from "../common/logger.js";
import {
  anyValue,
  type Check,
  checkBool,
  checkMaxAttempts,
  checkOptions,
  checkPriority,
  checkQueue,
  describeTable,
  fail,
  type Given,
  intIn,
  MAX_DATE_MS,
  MAX_DELAY_MS,
  MAX_TIMER_MS,
  MIN_DATE_MS,
  msIn,
  type OptionDoc,
  option,
  optionProblems,
  type Resolved,
  resolveOptions,
} from "../common/option-table.js";
import type { Backend } from "../contract/index.js";
import { DEFAULT_RETRY, type RetryPolicy, retryPolicyProblems } from "../jobs/retry-policy.js";
import {
  createRedactor,
  type RedactOption,
  type Redactor,
  redactOptionProblems,
} from "../observability/redact.js";
import { isMetricsSink, type MetricsSink, noopMetricsSink } from "../observability/sink.js";
import { JOB_DEFAULTS } from "../schema/constants.js";
import {
  DEFAULT_WEBHOOK_OPTIONS,
  type ResolvedWebhookOptions,
  resolveWebhookOptions,
  type WebhookOptions,
  webhookOptionProblems,
} from "../webhooks/options.js";
import { WORKER_OPTIONS } from "../worker/options.js";

/** The longest `dedupKey` (characters). */
export const MAX_DEDUP_KEY_LENGTH = 512;

export { fail } from "../common/option-table.js";

const checkRetry: Check = (problems, v, label) => {
  if (v !== undefined) problems.push(...retryPolicyProblems(v, label));
};
const ms = intIn(0, Number.MAX_SAFE_INTEGER);
const timerMs = intIn(0, MAX_TIMER_MS);

// ---------------------------------------------------------------------------------------------------
// new Soniq(options)

const SONIQ_OPTIONS = {
  backend: option<Backend<unknown>>()({
    check: (problems, v) => {
      if (typeof v !== "object" || v === null) problems.push("backend is required");
    },
    resolved: false,
    defaultDoc: "(required)",
    doc: "the storage backend; wrapped with `guardBackend`, closed by `soniq.close()`",
  }),
  logger: option<Logger>()({
    check: (problems, v) => {
      if (v !== undefined && !isLogger(v)) problems.push("logger needs debug, info, warn and error");
    },
    default: () => silentLogger,
    defaultDoc: "silent",
    doc: "pino-compatible `{ debug, info, warn, error }`, each called as `(obj, msg)`",
  }),
  metrics: option<MetricsSink>()({
    check: (problems, v) => {
      if (v !== undefined && !isMetricsSink(v))
        problems.push("metrics needs recordJobStart and recordJobEnd");
    },
    default: () => noopMetricsSink,
    defaultDoc: "no-op sink",
    doc: "a `MetricsSink` (see Metrics)",
  }),
  allowUnknownJobNames: option<boolean>()({
    check: checkBool,
    default: () => false,
    defaultDoc: "`false`",
    doc: "let `enqueue(name)` and `deadLetters.replay` use names not defined on this instance",
  }),
  defaultQueue: option<string>()({
    check: checkQueue,
    default: () => JOB_DEFAULTS.queue,
    defaultDoc: `\`"${JOB_DEFAULTS.queue}"\``,
    doc: "queue of jobs that name none",
  }),
  defaultPriority: option<number>()({
    check: checkPriority,
    default: () => JOB_DEFAULTS.priority,
    defaultDoc: `\`${JOB_DEFAULTS.priority}\``,
    doc: "priority of jobs that name none (lower runs first)",
  }),
  defaultMaxAttempts: option<number>()({
    check: checkMaxAttempts,
    default: () => JOB_DEFAULTS.maxAttempts,
    defaultDoc: `\`${JOB_DEFAULTS.maxAttempts}\``,
    doc: "runs per job unless the job sets `maxAttempts`",
  }),
  defaultTimeoutMs: option<number>()({
    check: timerMs,
    default: () => 300_000,
    defaultDoc: "`300000` (5 min)",
    doc: "handler time limit unless the job sets `timeoutMs`; `0` = no limit",
  }),
  resultTtlMs: option<number>()({
    check: ms,
    default: () => 300_000,
    defaultDoc: "`300000` (5 min)",
    doc: "how long done rows and results are kept; `0` deletes the row at completion",
  }),
  retry: option<RetryPolicy>()({
    check: checkRetry,
    default: () => DEFAULT_RETRY,
    defaultDoc: "exponential, 1 s base, 1 h cap, full jitter",
    doc: "retry policy unless the job sets `retry`",
  }),
  maxSnoozeMs: option<number>()({
    check: ms,
    default: () => 86_400_000,
    defaultDoc: "`86400000` (24 h)",
    doc: "longer snoozes are capped (with a warning)",
  }),
  maxSteps: option<number>()({
    check: intIn(1, 1_000_000),
    default: () => 1_000,
    defaultDoc: "`1000`",
    doc: "most checkpoints one job holds (`ctx.step`, sleeps and signal waits); beyond, the call throws `SONIQ_INVALID_ARGUMENT`",
  }),
  maxStepValueBytes: option<number>()({
    check: intIn(1, 64 * 1024 * 1024),
    default: () => 262_144,
    defaultDoc: "`262144` (256 KiB)",
    doc: "largest value a `ctx.step` stores (as JSON); beyond, the step throws `SONIQ_INVALID_ARGUMENT` and stores nothing",
  }),
  enqueueDurability: option<EnqueueDurability>()({
    check: checkDurability("enqueueDurability"),
    default: () => "durable",
    defaultDoc: '`"durable"`',
    doc: 'how an enqueue outside your transaction commits unless it sets `durability`: `"durable"` waits for the commit to be on disk; `"async"` does not (Postgres: a database crash can lose the last ~0.6 s of enqueues, never a claimed or settled job; see Durability)',
  }),
  producerId: option<string | null>()({
    check: (problems, v) => {
      if (v !== undefined && v !== null && typeof v !== "string") {
        problems.push("producerId must be a string or null");
      }
    },
    default: () => `${hostname()}:${process.pid}`,
    defaultDoc: '`"<hostname>:<pid>"`',
    doc: "stamped on enqueued rows; `null` stores nothing",
  }),
  clock: option<Clock>()({
    check: (problems, v) => {
      if (v !== undefined && !isClock(v)) problems.push("clock needs now() and setTimer(callback, ms)");
    },
    default: () => systemClock,
    defaultDoc: "the system clock",
    doc: "where recurring jobs read the time; tests pass `manualClock()`",
  }),
  redact: option<RedactOption, Redactor>()({
    check: (problems, v) => {
      problems.push(...redactOptionProblems(v));
    },
    default: () => createRedactor(undefined),
    normalise: (v) => createRedactor(v),
    defaultDoc: "none (shown as stored)",
    doc: "what operators see of args, results, progress and errors: field paths or a function (see Redaction)",
  }),
  webhooks: option<WebhookOptions, ResolvedWebhookOptions>()({
    check: (problems, v) => {
      problems.push(...webhookOptionProblems(v));
    },
    default: () => DEFAULT_WEBHOOK_OPTIONS,
    normalise: (v) => resolveWebhookOptions(v),
    defaultDoc: "no key; public targets only, any port",
    doc: "`{ secretKey, allowPrivateNetworks, allowedPorts, refreshMs, retentionMs, pendingMaxAgeMs }`: secrets' key or keyring, allowed targets and ports, delivery retention and pending ceiling (see Webhooks)",
  }),
};

/** `new Soniq(options)`: each option as the table above declares it (README: "Options"). */
export type SoniqOptions<B extends Backend<unknown> = Backend<unknown>> = Omit<
  Given<typeof SONIQ_OPTIONS>,
  "backend"
> & { backend: B };
export type ResolvedSoniqOptions = Omit<Resolved<typeof SONIQ_OPTIONS>, "backend">;

export function resolveSoniqOptions(options: SoniqOptions<Backend<unknown>>): ResolvedSoniqOptions {
  if (typeof options !== "object" || options === null) fail("Soniq options", ["pass an options object"]);
  const { problems, fields } = checkOptions(SONIQ_OPTIONS, options, "new Soniq()");
  if (problems.length > 0) fail("Soniq options", problems, fields);
  return Object.freeze(resolveOptions(SONIQ_OPTIONS, options, undefined)) as unknown as ResolvedSoniqOptions;
}

// ---------------------------------------------------------------------------------------------------
// soniq.job(name, handler, options)

const JOB_OPTIONS = {
  queue: option<string>()({
    check: checkQueue,
    default: (_, d: ResolvedSoniqOptions) => d.defaultQueue,
    defaultDoc: "instance `defaultQueue`",
    doc: "queue the job goes to",
  }),
  priority: option<number>()({
    check: checkPriority,
    default: (_, d: ResolvedSoniqOptions) => d.defaultPriority,
    defaultDoc: "instance `defaultPriority`",
    doc: "lower runs first",
  }),
  maxAttempts: option<number>()({
    check: checkMaxAttempts,
    default: (_, d: ResolvedSoniqOptions) => d.defaultMaxAttempts,
    defaultDoc: "instance `defaultMaxAttempts`",
    doc: "runs, first included",
  }),
  timeoutMs: option<number>()({
    check: timerMs,
    default: (_, d: ResolvedSoniqOptions) => d.defaultTimeoutMs,
    defaultDoc: "instance `defaultTimeoutMs`",
    doc: "`0` = no limit",
  }),
  retry: option<RetryPolicy>()({
    check: checkRetry,
    default: (_, d: ResolvedSoniqOptions) => d.retry,
    defaultDoc: "instance `retry`",
    doc: "see Retries",
  }),
  resultTtlMs: option<number>()({
    check: ms,
    default: (_, d: ResolvedSoniqOptions) => d.resultTtlMs,
    defaultDoc: "instance `resultTtlMs`",
    doc: "`0` deletes the row on success",
  }),
  schema: option<StandardSchemaV1, StandardSchemaV1 | undefined>()({
    check: (problems, v) => {
      if (v === undefined) return;
      const std = (v as { "~standard"?: { validate?: unknown } } | null)?.["~standard"];
      if (typeof std?.validate !== "function") problems.push("schema must be a Standard Schema validator");
    },
    defaultDoc: "none",
    doc: "any Standard Schema validator (zod, valibot, arktype, ...); see below",
  }),
  unique: option<boolean>()({
    check: checkBool,
    default: () => false,
    defaultDoc: "`false`",
    doc: "while a queued job with the same name and args exists, enqueue returns it",
  }),
  version: option<number>()({
    check: anyValue, // checked with `upcast` by checkVersions (each problem names its field)
    default: () => 1,
    defaultDoc: "`1`",
    doc: "the version of the args this handler takes; enqueues store it, workers upcast older jobs (see Versions)",
  }),
  upcast: option<Upcasters, Upcasters | undefined>()({
    check: anyValue,
    defaultDoc: "none",
    doc: "`{ n: (args) => newer }`: from version n to n + 1, for the versions below `version` still in the queue",
  }),
};

/** `soniq.job(name, handler, options)`; `schema` types the handler's args. */
export type JobOptions<S extends StandardSchemaV1 | undefined = StandardSchemaV1 | undefined> = Omit<
  Given<typeof JOB_OPTIONS>,
  "schema"
> & { schema?: S };
export type ResolvedJobOptions = Resolved<typeof JOB_OPTIONS>;

export function resolveJobOptions(
  name: string,
  options: JobOptions | undefined,
  defaults: ResolvedSoniqOptions,
): ResolvedJobOptions {
  const o = options === undefined ? {} : options;
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    fail(`job("${name}") options`, ["pass an options object (or nothing)"]);
  }
  const problems = optionProblems(JOB_OPTIONS, o, `job("${name}")`);
  if (problems.length > 0) fail(`options for job "${name}"`, problems);
  checkVersions(name, o as { version?: unknown; upcast?: unknown });
  return Object.freeze(resolveOptions(JOB_OPTIONS, o, defaults)) as unknown as ResolvedJobOptions;
}

// ---------------------------------------------------------------------------------------------------
// enqueue(args, options): checked here, resolved by the enqueue path (jobs.ts), which knows the job.

/**
 * How an enqueue's commit is made durable. `"durable"`: the commit returns once it is on disk (Postgres waits for
 * its WAL flush). `"async"`: it returns before (Postgres: `synchronous_commit = off` for that transaction alone),
 * so a database crash can lose the enqueues of the last moments; a claimed or settled job is never lost that way.
 */
export type EnqueueDurability = "durable" | "async";

function checkDurability(name: string): Check {
  return (problems, v) => {
    if (v !== undefined && v !== "durable" && v !== "async")
      problems.push(`${name} must be "durable" or "async"`);
  };
}

/** Why `durability: "async"` and `tx` do not go together. */
export const ASYNC_WITH_TX =
  'durability "async" does not apply inside your transaction (tx): your transaction\'s commit decides its durability';

const ENQUEUE_OPTIONS = {
  runAt: option<Date>()({
    check: (problems, v) => {
      if (v !== undefined && (!(v instanceof Date) || Number.isNaN(v.getTime()))) {
        problems.push("runAt must be a valid Date");
      } else if (v !== undefined && (v.getTime() < MIN_DATE_MS || v.getTime() > MAX_DATE_MS)) {
        problems.push("runAt must be between the years 1 and 9999 (every backend can store those)");
      }
    },
    defaultDoc: "now (the backend's clock)",
    doc: "a `Date` when the job becomes due; exclusive with `delayMs`",
  }),
  delayMs: option<number>()({
    check: msIn(0, MAX_DELAY_MS),
    defaultDoc: "`0`",
    doc: "due this many ms from now (this process's clock)",
  }),
  priority: option<number>()({ check: checkPriority, defaultDoc: "the job's", doc: "lower runs first" }),
  queue: option<string>()({ check: checkQueue, defaultDoc: "the job's", doc: "" }),
  dedupKey: option<string>()({
    check: (problems, v) => {
      if (v !== undefined && (typeof v !== "string" || v.length === 0)) {
        problems.push("dedupKey must be a non-empty string");
      } else if (typeof v === "string" && v.length > MAX_DEDUP_KEY_LENGTH) {
        problems.push(`dedupKey must be at most ${MAX_DEDUP_KEY_LENGTH} characters (hash longer keys)`);
      } else if (typeof v === "string" && storableText(v) !== v) {
        problems.push("dedupKey must not hold a NUL character or a lone surrogate");
      }
    },
    defaultDoc: "none",
    doc: "while a queued job with this key exists, enqueue returns it (`deduplicated: true`)",
  }),
  unique: option<boolean>()({
    check: checkBool,
    defaultDoc: "the job's",
    doc: "dedup on (name, sha256 of the canonical args JSON) while queued",
  }),
  group: option<string>()({
    check: (problems, v) => {
      if (v !== undefined && (typeof v !== "string" || v.length === 0 || v.length > 200)) {
        problems.push("group must be a non-empty string of at most 200 characters");
      }
    },
    defaultDoc: "none",
    doc: "the job's group on its queue; the queue's `groupConcurrency` caps processing jobs per group",
  }),
  tx: option<unknown>()({
    check: anyValue,
    defaultDoc: "none",
    doc: "write inside your transaction (see below)",
  }),
  durability: option<EnqueueDurability>()({
    check: checkDurability("durability"),
    defaultDoc: "the instance's `enqueueDurability`",
    doc: '`"async"`: the commit does not wait for the disk (not with `tx`: your commit decides)',
  }),
  version: option<number>()({
    check: (problems, v) => {
      if (v !== undefined && (!Number.isSafeInteger(v) || (v as number) < 1)) {
        problems.push("version must be a positive integer");
      }
    },
    defaultDoc: "the job's `version` (by name without a definition: none, taken as current)",
    doc: "the version of these args, for a producer older or newer than this instance's definition",
  }),
};

/** `enqueue(args, options)`; `tx` is the backend's transaction handle. */
export type EnqueueOptions<TTx = unknown> = Omit<Given<typeof ENQUEUE_OPTIONS>, "tx"> & { tx?: TTx };

/** Problems with enqueue options (empty when valid). */
export function enqueueOptionProblems(o: EnqueueOptions): string[] {
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    return ["enqueue options must be an object (or nothing)"];
  }
  const problems = optionProblems(ENQUEUE_OPTIONS, o, "enqueue()");
  if (o.runAt !== undefined && o.delayMs !== undefined) problems.push("pass runAt or delayMs, not both");
  if (o.durability === "async" && (o as { tx?: unknown }).tx !== undefined) problems.push(ASYNC_WITH_TX);
  return problems;
}

/** Every option of `new Soniq()`, `soniq.job()`, `enqueue()` and `soniq.worker()`: name, default, meaning. */
export function describeOptions(): {
  soniq: OptionDoc[];
  job: OptionDoc[];
  enqueue: OptionDoc[];
  worker: OptionDoc[];
} {
  return {
    soniq: describeTable(SONIQ_OPTIONS),
    job: describeTable(JOB_OPTIONS),
    enqueue: describeTable(ENQUEUE_OPTIONS),
    worker: describeTable(WORKER_OPTIONS),
  };
}

/** `upcast`: from version n (the key) to n + 1. Upcasters are pure functions of the args. */
export type Upcasters = Readonly<Record<number, (args: never) => unknown>>;

/**
 * `version` a positive integer; `upcast` an object whose keys are positive integers below `version` and whose
 * values are functions; no `upcast` without a `version` above 1. A gap is allowed (an application may drop its
 * oldest versions): a job with no path to the current version dead-letters naming the missing step.
 */
function checkVersions(name: string, o: { version?: unknown; upcast?: unknown }): void {
  const refuse = (field: string, problem: string): never => {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid options for job "${name}": ${problem}.`, {
      context: { field, problems: [problem] },
    });
  };
  const { version, upcast } = o;
  if (
    version !== undefined &&
    (typeof version !== "number" || !Number.isSafeInteger(version) || version < 1)
  ) {
    refuse("version", "version must be a positive integer");
  }
  if (upcast === undefined) return;
  if (version === undefined || version === 1) {
    refuse("upcast", "upcast needs a version above 1 (it turns older args into the current version's)");
  }
  if (typeof upcast !== "object" || upcast === null || Array.isArray(upcast)) {
    refuse("upcast", "upcast must be an object { fromVersion: (args) => newerArgs }");
  }
  for (const [key, fn] of Object.entries(upcast as object)) {
    const from = Number(key);
    if (!/^[1-9][0-9]*$/.test(key) || from >= (version as number)) {
      refuse(`upcast.${key}`, `upcast keys are versions from 1 to ${(version as number) - 1}, got "${key}"`);
    }
    if (typeof fn !== "function")
      refuse(`upcast.${key}`, `upcast.${key} must be a function (args) => newerArgs`);
  }
}
