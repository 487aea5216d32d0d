/**
 * Extensibility around a job run, registered with `soniq.use(...)`:
 * - hooks (`beforeJob`, `afterJob`, `onError`) observe; a hook that throws is logged and ignored.
 * - wrapping middleware `(ctx, next) => ...` runs around the handler and may transform the result,
 *   short-circuit (not call `next`), or throw (an ordinary failed attempt). The first registered is
 *   the outermost. Middleware runs inside the timeout, so a slow middleware times out like a handler.
 */

import { SoniqError } from "../common/errors.js";
import type { Redactor } from "../common/redactor.js";
import type { JobContext } from "../jobs/context.js";
import type { ProducerHook, RunOutcome } from "../observability/tracing.js";

export type Next = () => Promise<unknown>;
export type Middleware = (ctx: JobContext, next: Next) => unknown;

export interface Hooks {
  /** Before the handler (after args were parsed). */
  beforeJob?(ctx: JobContext): void | Promise<void>;
  /** After a successful run, with the value to be stored (not after a snooze). */
  afterJob?(ctx: JobContext, result: unknown): void | Promise<void>;
  /** After every failed run (timeouts included), before the retry/dead-letter decision. */
  onError?(ctx: JobContext, error: unknown): void | Promise<void>;
}

export interface Plugin extends Hooks {
  /** Shown in logs when a hook fails. */
  name?: string;
  /**
   * Called once by `soniq.use(plugin)`, before any other hook, with the instance: what a plugin may read of it
   * (its resolved `options`, e.g. `redact`, so a tracer hides what the app hides without being told twice).
   */
  attach?(soniq: { readonly options: { readonly redact: Redactor } }): void;
  /** Wrapping middleware contributed by this plugin. */
  middleware?: Middleware;
  /**
   * Around every write of new jobs (enqueue, enqueueMany, replay, a schedule's fire): may supply the trace
   * context stored on them. See `ProducerHook`.
   */
  producer?: ProducerHook;
  /**
   * Once per run, when its outcome is decided (before it is written), synchronously. Also for runs that end
   * without the handler settling them (timeout, cancellation, shutdown). A hook that throws is logged.
   */
  onOutcome?(ctx: JobContext, outcome: RunOutcome): void;
  /**
   * Around each durable step that runs (`ctx.step`; not one answered from its checkpoint): call `run()` and
   * return what it returns, synchronously (a transactional step on SQLite is synchronous, so `run()` may return a
   * plain value; otherwise a promise). The first registered is the outermost. A tracer opens a span here.
   */
  step?<T>(ctx: JobContext, step: StepInfo, run: () => T): T;
}

/** The step a `step` hook wraps. */
export interface StepInfo {
  /** The occurrence name (`charge`, `charge#2`). */
  readonly name: string;
  /** Whether it runs inside the backend's transaction (`{ transaction: true }`). */
  readonly transaction: boolean;
}

/** `run` inside every plugin's `step` hook, the first registered outermost. */
export function aroundStep<T>(plugins: readonly Plugin[], ctx: JobContext, step: StepInfo, run: () => T): T {
  let call = run;
  for (let i = plugins.length - 1; i >= 0; i--) {
    const hook = plugins[i]?.step;
    if (hook === undefined) continue;
    const inner = call;
    const plugin = plugins[i] as Plugin;
    call = () => hook.call(plugin, ctx, step, inner) as T;
  }
  return call();
}

/** Runs `final` inside `chain`, outermost first. With no middleware it is just `final()`. */
export function runChain(chain: readonly Middleware[], ctx: JobContext, final: Next): Promise<unknown> {
  const step = (i: number): Promise<unknown> => {
    try {
      const mw = chain[i];
      if (!mw) return final();
      let called = false;
      return Promise.resolve(
        mw(ctx, () => {
          if (called) return Promise.reject(new Error("middleware called next() more than once"));
          called = true;
          return step(i + 1);
        }),
      );
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return step(0);
}

/** The functions a plugin may hold. */
const PLUGIN_FUNCTIONS = [
  "beforeJob",
  "afterJob",
  "onError",
  "middleware",
  "producer",
  "onOutcome",
  "step",
  "attach",
] as const;
/** What a plain-object plugin passed to `use()` may hold. */
const PLUGIN_KEYS: readonly string[] = ["name", ...PLUGIN_FUNCTIONS];

/**
 * What `soniq.use(extension)` installs: a function is middleware; a plugin object is checked, so that a
 * misspelt hook fails at `use()` instead of never running.
 */
export function toPlugin(extension: Plugin | Middleware): Plugin {
  const plugin: Plugin = typeof extension === "function" ? { middleware: extension } : extension;
  if (typeof plugin !== "object" || plugin === null || Array.isArray(plugin)) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `use() takes a middleware function or { ${PLUGIN_KEYS.join(", ")} }.`,
    );
  }
  // A misspelt hook in a plain object would otherwise never run, silently (class instances may keep state).
  const proto = Object.getPrototypeOf(plugin);
  const plain = proto === Object.prototype || proto === null;
  const unknown = plain ? Object.keys(plugin).find((k) => !PLUGIN_KEYS.includes(k)) : undefined;
  if (unknown !== undefined) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `use(): unknown key "${unknown}" (a plugin has ${PLUGIN_KEYS.join(", ")}).`,
      { context: { key: unknown } },
    );
  }
  if (plugin.name !== undefined && typeof plugin.name !== "string") {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", "use(): name must be a string.", {
      context: { key: "name" },
    });
  }
  for (const key of PLUGIN_FUNCTIONS) {
    if (plugin[key] !== undefined && typeof plugin[key] !== "function") {
      throw new SoniqError("SONIQ_INVALID_ARGUMENT", `use(): ${key} must be a function.`, {
        context: { key },
      });
    }
  }
  return plugin;
}
