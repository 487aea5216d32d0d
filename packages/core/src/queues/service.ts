/**
 * `soniq.queues`: pause, resume and limit queues (DESIGN.md section 9). Inputs are validated here, once;
 * each action writes its audit row through the same facet call, so both commit together.
 * The limits are enforced by each backend's claim; this file only states them.
 */

import { SoniqError } from "../common/errors.js";
import { checkQueue } from "../common/option-table.js";
import type { EstimableCount, QueueInfo, QueueSettings, QueueStats, RateLimit } from "../common/types.js";
import { ESTIMABLE_COUNTS } from "../common/types.js";
import type { GuardedBackend, QueueConfigPatch } from "../contract/index.js";
import { invalid, noArguments } from "../jobs/queries.js";
import { type ActorOptions, actorOf, auditRecord } from "../observability/audit.js";
import { assertKnownQueue, createFlag } from "./known.js";

/**
 * `queues.list()` counts done, cancelled and dead-letter rows exactly up to this many per queue; a larger
 * count may be an estimate (the Postgres backend asks its planner statistics rather than read every row),
 * and the entry's `estimated` names it. Queued and processing counts are always exact.
 */
export const EXACT_COUNTS_UP_TO = 10_000;

/** What `configure` takes: an omitted key keeps its value, `null` clears the limit. */
export interface QueueConfig {
  concurrency?: number | null;
  groupConcurrency?: number | null;
  rateLimit?: RateLimit | null;
  /** Fire the `queue.backlog` webhook event when the queue's lag passes this many ms (null clears it). */
  lagAlertMs?: number | null;
}

/** The largest count or window a limit takes (the storage holds 32-bit integers). */
const MAX_LIMIT = 2_147_483_647;

export function assertQueueName(name: unknown, what: string): string {
  const problems: string[] = [];
  checkQueue(problems, name, `${what}: the queue name`);
  if (name === undefined) problems.push(`${what}: a queue name is required`);
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", problems.join("; "), { context: { queue: name } });
  }
  return name as string;
}

function count(value: unknown, what: string): number | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > MAX_LIMIT) {
    throw invalid(what, `expected an integer from 1 to ${MAX_LIMIT}, or null to clear it`, value);
  }
  return value;
}

function rateLimit(value: unknown, what: string): RateLimit | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalid(what, "expected { max, perMs } or null to clear it", value);
  }
  const extra = Object.keys(value).filter((k) => k !== "max" && k !== "perMs");
  if (extra.length > 0) throw invalid(`${what}.${extra[0]}`, "unknown key; known keys are max, perMs", extra);
  const { max, perMs } = value as { max?: unknown; perMs?: unknown };
  if (max === undefined || perMs === undefined || max === null || perMs === null) {
    throw invalid(what, "needs both max and perMs (integers; null clears the whole rateLimit)", value);
  }
  return { max: count(max, `${what}.max`) as number, perMs: count(perMs, `${what}.perMs`) as number };
}

const CONFIG_KEYS = ["concurrency", "groupConcurrency", "rateLimit", "lagAlertMs"];

/** The validated patch (`SONIQ_INVALID_ARGUMENT` naming the key otherwise). */
export function queueConfigPatch(config: unknown, what: string): QueueConfigPatch {
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw invalid(what, "expected { concurrency, groupConcurrency, rateLimit, lagAlertMs }", config);
  }
  const extra = Object.keys(config).filter((k) => !CONFIG_KEYS.includes(k));
  if (extra.length > 0) {
    throw invalid(`${what}.${extra[0]}`, `unknown key; known keys are ${CONFIG_KEYS.join(", ")}`, extra);
  }
  const c = config as Record<string, unknown>;
  const patch: QueueConfigPatch = {};
  const concurrency = count(c.concurrency, `${what}.concurrency`);
  const groupConcurrency = count(c.groupConcurrency, `${what}.groupConcurrency`);
  const rate = rateLimit(c.rateLimit, `${what}.rateLimit`);
  const lagAlertMs = count(c.lagAlertMs, `${what}.lagAlertMs`);
  if (concurrency !== undefined) patch.concurrency = concurrency;
  if (groupConcurrency !== undefined) patch.groupConcurrency = groupConcurrency;
  if (rate !== undefined) patch.rateLimit = rate;
  if (lagAlertMs !== undefined) patch.lagAlertMs = lagAlertMs;
  if (Object.keys(patch).length === 0) {
    throw invalid(what, `expected at least one of ${CONFIG_KEYS.join(", ")} (null clears a limit)`, config);
  }
  return patch;
}

/** A queue control's options: the audit actor, and `create` to act on a name nothing knows yet. */
export interface QueueControlOptions extends ActorOptions {
  /**
   * Act on a queue no job, dead letter, worker or setting knows yet (default false: such a name is refused
   * with `SONIQ_UNKNOWN_QUEUE`, since it is usually a typo).
   */
  create?: boolean;
}

export class QueueService {
  readonly #backend: GuardedBackend<unknown>;
  readonly #declared: () => Iterable<string>;

  /** `declared`: the queue names this app declares (its job definitions' queues, its default queue). */
  constructor(backend: GuardedBackend<unknown>, declared: () => Iterable<string> = () => []) {
    this.#backend = backend;
    this.#declared = declared;
  }

  /** Checks the name and options of a control, and that the queue is known (or `create`). */
  async #control(name: unknown, options: unknown, what: string): Promise<{ queue: string; actor: string }> {
    const queue = assertQueueName(name, `${what}()`);
    const actor = actorOf(options, `${what}(options)`, ["create"]);
    const create = createFlag(options, `${what}(options)`);
    await assertKnownQueue(this.#backend, queue, this.#declared, create, `${what}()`);
    return { queue, actor };
  }

  /**
   * Stop claims from the queue (running jobs finish). Durable; every worker sees it within a poll. A name
   * nothing knows is refused (`SONIQ_UNKNOWN_QUEUE`) unless `create` is set.
   */
  async pause(name: string, options?: QueueControlOptions): Promise<QueueSettings> {
    const { queue, actor } = await this.#control(name, options, "queues.pause");
    return this.#backend.queues.pause(queue, auditRecord("queue.pause", actor, queue, null));
  }

  /** Let workers claim from the queue again (they are woken where the backend notifies). Unknown names as `pause`. */
  async resume(name: string, options?: QueueControlOptions): Promise<QueueSettings> {
    const { queue, actor } = await this.#control(name, options, "queues.resume");
    return this.#backend.queues.resume(queue, auditRecord("queue.resume", actor, queue, null));
  }

  /**
   * Merge limits into the queue's settings: an omitted key keeps its value, `null` clears it. Unknown names
   * as `pause`.
   */
  async configure(name: string, config: QueueConfig, options?: QueueControlOptions): Promise<QueueSettings> {
    const patch = queueConfigPatch(config, "queues.configure(config)");
    const { queue, actor } = await this.#control(name, options, "queues.configure");
    const audit = auditRecord("queue.configure", actor, queue, { ...patch });
    return this.#backend.queues.configure(queue, patch, audit);
  }

  /** The queue's settings (unpaused and unlimited when it has none). */
  get(name: string): Promise<QueueSettings> {
    return attempt(() => this.#backend.queues.get(assertQueueName(name, "queues.get()")));
  }

  /**
   * Every queue with jobs, dead letters or settings: its controls, stats and lag. Done, cancelled and
   * dead-letter counts above `EXACT_COUNTS_UP_TO` may be estimates, named in each entry's `estimated`.
   */
  list(...args: []): Promise<QueueInfo[]> {
    return attempt(() => {
      noArguments(args, "queues.list()", "takes no arguments (it lists every queue)");
      return this.#backend.queues.list({ exactCountsUpTo: EXACT_COUNTS_UP_TO });
    });
  }
}

/**
 * One `queues.list()` entry from a queue's settings, its stats, its lag (rounded, never negative) and the
 * counts that are estimates (listed in `ESTIMABLE_COUNTS` order).
 */
export function queueInfo(
  settings: QueueSettings,
  stats: QueueStats,
  lagMs: number | null,
  estimated: readonly EstimableCount[] = [],
): QueueInfo {
  return {
    name: settings.name,
    paused: settings.paused,
    concurrency: settings.concurrency,
    groupConcurrency: settings.groupConcurrency,
    rateLimit: settings.rateLimit && { ...settings.rateLimit },
    lagAlertMs: settings.lagAlertMs ?? null,
    stats,
    estimated: ESTIMABLE_COUNTS.filter((k) => estimated.includes(k)),
    lagMs: lagMs === null ? null : Math.max(0, Math.round(lagMs)),
  };
}

function attempt<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err);
  }
}
