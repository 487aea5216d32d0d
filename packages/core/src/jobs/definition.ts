/**
 * Job definitions and the enqueue path: names, args (JSON + schema), and the `NewJob` row core hands
 * to the backend. Nothing here touches storage except the final `backend.enqueue(Many)` call.
 */

import type { StandardSchemaV1 } from "@standard-schema/spec";
import {
  type EnqueueDurability,
  type EnqueueOptions,
  enqueueOptionProblems,
  fail,
  type ResolvedJobOptions,
  type ResolvedSoniqOptions,
} from "../app/options.js";
import { SoniqError } from "../common/errors.js";
import { newJobId } from "../common/ids.js";
import { argsHash, checkJson } from "../common/json.js";
import { assertJobName } from "../common/names.js";
import type { TraceContext } from "../common/types.js";
import type { Backend, EnqueueOptions as BackendEnqueueOptions, NewJob } from "../contract/index.js";
import type { SendEvent, SendOrigin } from "../observability/tracing.js";
import type { JobContext } from "./context.js";
import type { Snooze } from "./outcomes.js";
import type { EnqueueHandle } from "./results.js";
import { upcastArgs } from "./versions.js";

/** A job handler. It may return `snooze(ms)` (a `Snooze`) instead of a result. */
export type Handler<TArgs, TResult> = (args: TArgs, ctx: JobContext) => TResult | Promise<TResult>;

/** The stored result type of a handler returning `TResult` (snoozes are not results). */
export type JobResult<TResult> = Exclude<TResult, Snooze>;

/** What `soniq.job(...)` returns: the job's name, its resolved options, and a typed `enqueue`. */
export interface JobDefinition<TArgs, TResult = unknown, TTx = unknown> {
  readonly name: string;
  readonly options: ResolvedJobOptions;
  /** Resolves to `{ id, deduplicated }` with `result()`, the job's terminal outcome typed by its handler. */
  enqueue(args: TArgs, options?: EnqueueOptions<TTx>): Promise<EnqueueHandle<TResult>>;
  /** Type-only marker for the handler's result (never set at run time). */
  readonly __result?: TResult;
}

/** A registered job as the worker sees it. */
export interface RegisteredJob {
  readonly name: string;
  readonly handler: (args: unknown, ctx: JobContext) => unknown;
  readonly options: ResolvedJobOptions;
}

export type SchemaResult =
  | { ok: true; value: unknown }
  | { ok: false; issues: readonly StandardSchemaV1.Issue[] };

/** Runs a Standard Schema validator (sync or async). */
export async function validateWithSchema(schema: StandardSchemaV1, value: unknown): Promise<SchemaResult> {
  let result = schema["~standard"].validate(value);
  if (result instanceof Promise) result = await result;
  return result.issues ? { ok: false, issues: result.issues } : { ok: true, value: result.value };
}

/** Issues as plain data (paths as arrays of keys), safe to log and to put in error context. */
export function plainIssues(
  issues: readonly StandardSchemaV1.Issue[],
): { message: string; path: string[] }[] {
  return issues.map((i) => ({
    message: i.message,
    path: (i.path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p)),
  }));
}

export function formatIssues(issues: readonly StandardSchemaV1.Issue[]): string {
  return plainIssues(issues)
    .map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
    .join("; ");
}

export interface EnqueueTarget {
  name: string;
  def: RegisteredJob | undefined;
}

/** The job `name` names here (its definition, when this instance has one). */
export function targetOf(name: string, registry: ReadonlyMap<string, RegisteredJob>): EnqueueTarget {
  return { name, def: registry.get(name) };
}

/**
 * What a job made from an earlier one keeps from it instead of the definition's defaults: a replay keeps
 * its dead letter's `maxAttempts`, a schedule its stored one (null: the job's own).
 */
export interface Inherited {
  maxAttempts?: number | null;
  /** A replay's: the dead letter's args version (kept; the worker upcasts). */
  argsVersion?: number | null;
}

/** Resolves a name for enqueue: valid, and known unless the instance allows unknown names. */
export function resolveTarget(
  name: unknown,
  registry: ReadonlyMap<string, RegisteredJob>,
  defaults: ResolvedSoniqOptions,
): EnqueueTarget {
  // A defined job's name was checked when it was defined: only other names need the pattern's test.
  const def = typeof name === "string" ? registry.get(name) : undefined;
  if (def) return { name: name as string, def };
  assertJobName(name);
  const target = targetOf(name, registry);
  if (!target.def && !defaults.allowUnknownJobNames) {
    throw new SoniqError(
      "SONIQ_UNKNOWN_TASK_NAME",
      `No job named "${name}" is defined on this Soniq instance. Define it with soniq.job("${name}", ...) ` +
        "in this process, or create the instance with allowUnknownJobNames: true for producers that do not hold handlers.",
      { context: { name } },
    );
  }
  return target;
}

const where = (index: number | undefined) => (index === undefined ? "" : ` (item ${index})`);

/**
 * Validates args and options and builds the row to insert. Throws before anything is written. The one
 * preparation every new job goes through: `enqueue`, `enqueueMany`, a schedule's fire (and its declaration's
 * check) and a dead-letter replay, so defaults, the JSON check and the job's schema hold for all of them.
 * Synchronous unless the job's schema validates asynchronously: with a SQLite `tx`, the backend's insert
 * must happen before the caller's synchronous transaction returns, so the enqueue path awaits nothing
 * it does not have to.
 */
export function prepareJob(
  target: EnqueueTarget,
  args: unknown,
  options: EnqueueOptions | undefined,
  defaults: ResolvedSoniqOptions,
  index?: number,
  inherited: Inherited = {},
): NewJob | Promise<NewJob> {
  const { name, def } = target;
  const o = options === undefined ? {} : options;
  const problems = options === undefined ? [] : enqueueOptionProblems(o);
  if (problems.length > 0) {
    if (index === undefined) fail(`enqueue options for "${name}"`, problems);
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      `Invalid options for item ${index} ("${name}"): ${problems.join("; ")}.`,
      {
        context: { index, name, problems },
      },
    );
  }
  const json = checkJson(args);
  if (!json.ok) {
    throw new SoniqError(
      "SONIQ_TASK_ARGS_INVALID",
      `Args for "${name}"${where(index)} are not JSON: ${json.problem.problem} at ${json.problem.path}.`,
      { context: { name, index, path: json.problem.path, problem: json.problem.problem } },
    );
  }
  const schema = def?.options.schema;
  const argsVersion =
    inherited.argsVersion !== undefined ? inherited.argsVersion : (o.version ?? def?.options.version ?? null);
  const build = () => buildNewJob(target, json.value, o, defaults, inherited, argsVersion);
  if (!schema) return build();
  // Args of another version than this definition's: a newer producer's are the newer workers' to check; an
  // older one's are checked as the worker will see them, through the upcasters (and stored as given).
  let checkedArgs: unknown = json.value;
  const current = def?.options.version ?? 1;
  if (argsVersion !== null && argsVersion !== current) {
    if (argsVersion > current) return build();
    const up = upcastArgs(name, def?.options.upcast, json.value, argsVersion, current);
    if (!up.ok) {
      throw new SoniqError("SONIQ_TASK_ARGS_INVALID", `Args for "${name}"${where(index)}: ${up.error}`, {
        context: { name, index, version: argsVersion },
      });
    }
    checkedArgs = up.args;
  }
  const checked = (result: StandardSchemaV1.Result<unknown>): NewJob => {
    if (result.issues) {
      throw new SoniqError(
        "SONIQ_TASK_ARGS_INVALID",
        `Args for "${name}"${where(index)} fail its schema: ${formatIssues(result.issues)}.`,
        { context: { name, index, issues: plainIssues(result.issues) } },
      );
    }
    return build();
  };
  const result = schema["~standard"].validate(checkedArgs);
  return result instanceof Promise ? result.then(checked) : checked(result);
}

function buildNewJob(
  { name, def }: EnqueueTarget,
  args: unknown,
  o: EnqueueOptions,
  defaults: ResolvedSoniqOptions,
  inherited: Inherited,
  argsVersion: number | null,
): NewJob {
  const unique = o.unique ?? def?.options.unique ?? false;
  let scheduledAt: Date | null = null;
  if (o.runAt) scheduledAt = o.runAt;
  else if (o.delayMs !== undefined && o.delayMs > 0) scheduledAt = new Date(Date.now() + o.delayMs);
  return {
    id: newJobId(),
    jobName: name,
    args,
    argsHash: unique ? argsHash(args) : null,
    queue: o.queue ?? def?.options.queue ?? defaults.defaultQueue,
    priority: o.priority ?? def?.options.priority ?? defaults.defaultPriority,
    maxAttempts: inherited.maxAttempts ?? def?.options.maxAttempts ?? defaults.defaultMaxAttempts,
    scheduledAt,
    dedupKey: o.dedupKey ?? null,
    unique,
    group: o.group ?? null,
    producerId: defaults.producerId,
    flowId: null,
    stepRef: null,
    argsVersion,
    traceId: null,
    traceContext: null,
  };
}

const NO_TX: BackendEnqueueOptions<never> = Object.freeze({});

/** `tx` is only accepted by backends that can write inside a caller's transaction. */
const ASYNC: BackendEnqueueOptions<never> = Object.freeze({ durability: "async" });

/**
 * The backend's options for an enqueue: the caller's transaction, or, outside one, the durability the call
 * asked for (`durability`) or else the instance's `enqueueDurability`. Inside a transaction its commit decides
 * (an explicit `durability: "async"` with `tx` was refused by the options check).
 */
export function enqueueBackendOptions<TTx>(
  backend: Backend<TTx>,
  tx: TTx | undefined,
  durability: EnqueueDurability | undefined,
  defaults: ResolvedSoniqOptions,
): BackendEnqueueOptions<TTx> {
  if (tx !== undefined) return txOptions(backend, tx);
  return (durability ?? defaults.enqueueDurability) === "async" ? ASYNC : NO_TX;
}

export function txOptions<TTx>(backend: Backend<TTx>, tx: TTx | undefined): BackendEnqueueOptions<TTx> {
  if (tx === undefined) return NO_TX;
  if (!backend.capabilities.transactionalEnqueue) {
    throw new SoniqError(
      "SONIQ_TRANSACTION_UNSUPPORTED",
      `The ${backend.name} backend cannot enqueue inside a caller's transaction; drop the tx option or use a backend that can (postgres, sqlite).`,
      { context: { backend: backend.name } },
    );
  }
  return { tx };
}

/** What producer hooks see of a write of new jobs (tracing.ts). */
export function sendEvent(
  origin: SendOrigin,
  jobs: readonly NewJob[],
  links: readonly TraceContext[] = [],
): SendEvent {
  return { origin, jobs: jobs.map((j) => ({ id: j.id, jobName: j.jobName, queue: j.queue })), links };
}
