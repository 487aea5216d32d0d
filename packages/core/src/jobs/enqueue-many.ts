/**
 * The shape checks of `soniq.jobs.enqueueMany(items, options)`: each item is `{ job, args, options? }` and the call
 * takes only `{ tx, durability }`. A bad item is a typed error before anything is written; so is an item `prepareJob`
 * refuses, its error naming the item (`context.index`).
 */

import {
  ASYNC_WITH_TX,
  type EnqueueDurability,
  type EnqueueOptions,
  fail,
  type ResolvedSoniqOptions,
} from "../app/options.js";
import { SoniqError } from "../common/errors.js";
import type { NewJob } from "../contract/index.js";
import { type JobDefinition, prepareJob, type RegisteredJob, resolveTarget } from "./definition.js";

/** One item of `enqueueMany`: a definition (or a name) with its args and options (no `tx`). */
export interface EnqueueManyItem<TTx = unknown> {
  job: string | JobDefinition<never, unknown, TTx>;
  args: unknown;
  options?: Omit<EnqueueOptions<TTx>, "tx" | "durability">;
}

const ITEM_KEYS = ["job", "args", "options"];

/** An `enqueueMany` item is `{ job, args, options? }`; a `tx` belongs to the call's options, not an item's. */
export function assertManyItem(item: unknown, index: number): void {
  const bad = (message: string, key?: string) =>
    new SoniqError("SONIQ_INVALID_ARGUMENT", `enqueueMany() item ${index}: ${message}`, {
      context: { index, key },
    });
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    throw bad("expected { job, args, options }");
  }
  const unknown = Object.keys(item).find((k) => !ITEM_KEYS.includes(k));
  if (unknown !== undefined)
    throw bad(`unknown key "${unknown}"; an item takes job, args and options`, unknown);
  const options = (item as { options?: unknown }).options;
  if (typeof options === "object" && options !== null) {
    for (const key of CALL_KEYS) {
      if (key in options) {
        throw bad(`${key} is not an item option; pass it once as enqueueMany(items, { ${key} })`, key);
      }
    }
  }
}

/** The call options of `enqueueMany`: the transaction, or the durability of the batch's own commit. */
export interface EnqueueManyOptions<TTx = unknown> {
  /** Write inside your transaction (all or nothing with it). */
  tx?: TTx;
  /** As `enqueue`'s `durability`, for the whole batch (one commit); not with `tx`. */
  durability?: EnqueueDurability;
}

const CALL_KEYS = ["tx", "durability"];

/** The call options of `enqueueMany`: `{ tx?, durability? }` and nothing else. */
export function assertManyOptions(options: unknown): void {
  const isObject = typeof options === "object" && options !== null && !Array.isArray(options);
  const unknown = isObject ? Object.keys(options).find((k) => !CALL_KEYS.includes(k)) : undefined;
  if (!isObject || unknown !== undefined) {
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      isObject
        ? `enqueueMany() has no option "${unknown}"; per-job options go on each item, the call takes only { tx, durability }.`
        : "enqueueMany(items, options): options must be an object { tx, durability } (or nothing).",
      { context: { key: unknown } },
    );
  }
  const { tx, durability } = options as EnqueueManyOptions;
  const problems: string[] = [];
  if (durability !== undefined && durability !== "durable" && durability !== "async") {
    problems.push('durability must be "durable" or "async"');
  } else if (durability === "async" && tx !== undefined) {
    problems.push(ASYNC_WITH_TX);
  }
  if (problems.length > 0) fail("enqueueMany() options", problems);
}

/** One item checked and prepared like an `enqueue` (an unknown name's error names the item). */
export function prepareManyItem(
  item: EnqueueManyItem<unknown>,
  i: number,
  registry: ReadonlyMap<string, RegisteredJob>,
  defaults: ResolvedSoniqOptions,
): NewJob | Promise<NewJob> {
  assertManyItem(item, i);
  const name = typeof item?.job === "string" ? item.job : item?.job?.name;
  let target: ReturnType<typeof resolveTarget>;
  try {
    target = resolveTarget(name, registry, defaults);
  } catch (err) {
    if (err instanceof SoniqError) {
      throw new SoniqError(err.code, `Item ${i}: ${err.message}`, {
        context: { ...err.context, index: i },
      });
    }
    throw err;
  }
  return prepareJob(target, item.args, item.options, defaults, i);
}
