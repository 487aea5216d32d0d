/**
 * The machinery behind the options tables (options.ts): each option is declared once, with its check,
 * its default and the two lines of documentation docs/reference/options.md shows, and the validation, the resolution
 * and `describeOptions()` all read that one declaration.
 */
import { SoniqError } from "./errors.js";
import { QUEUE_NAME_PATTERN } from "./names.js";

/** Adds a problem for `value` (which may be undefined: most checks accept that) under `label`. */
export type Check = (problems: string[], value: unknown, label: string) => void;

/**
 * One option: its check, its default, its documentation lines, and (as type parameters) its value as users write
 * it (`T`) and as core resolves it (`R`). The options types are derived from the tables (`Given`,
 * `Resolved`), so an option is declared once.
 */
export interface OptionSpec<T, Ctx = undefined, R = T> {
  check: Check;
  /** The value when the option is not given, from the options resolved before it and the context. */
  default?(resolved: Readonly<Record<string, unknown>>, ctx: Ctx): R;
  /** Applied to a given value (e.g. a copy that cannot change under the caller's feet). */
  normalise?(value: T): R;
  /** False for options that configure the call but are not part of the resolved object (`backend`). */
  resolved?: false;
  /** The options page's "default" column. */
  defaultDoc: string;
  /** The options page's "meaning" column. */
  doc: string;
}

/**
 * Declares an option whose value users write as `T` and core resolves to `R` (`T` unless said):
 * `logger: option<Logger>()({ check, default: () => silentLogger, ... })`.
 */
export const option =
  <T, R = T>() =>
  <Ctx = undefined>(spec: OptionSpec<T, Ctx, R>): OptionSpec<T, Ctx, R> =>
    spec;

/** A table with its types erased: what the validation, the resolution and the docs read. */
type AnyTable = Readonly<Record<string, OptionSpec<never, never, unknown>>>;

/** The options object users pass: every option of the table, optional, as users write it. */
export type Given<Table> = {
  -readonly [K in keyof Table]?: Table[K] extends OptionSpec<infer T, infer _Ctx, infer _R> ? T : never;
};

/** The resolved options object: every option of the table, as core resolves it. */
export type Resolved<Table> = {
  readonly [K in keyof Table]: Table[K] extends OptionSpec<infer _T, infer _Ctx, infer R> ? R : never;
};

/** An option as documented: the rows of docs/reference/options.md's tables. */
export interface OptionDoc {
  name: string;
  default: string;
  meaning: string;
}

/**
 * Throws `SONIQ_INVALID_OPTIONS` with every problem; with `fields` (the option each problem is about, from
 * `checkOptions`) also `context.field` (the first) and `context.fields`.
 */
export function fail(what: string, problems: string[], fields?: readonly string[]): never {
  const named = fields === undefined || fields.length === 0 ? {} : { field: fields[0], fields: [...fields] };
  throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid ${what}: ${problems.join("; ")}.`, {
    context: { problems, ...named },
  });
}

/**
 * A call's options argument (`{ actor }`, `runOnce`'s `{ maxJobs }`, `history`'s `{ limit }`...): left out,
 * it is `{}`; anything but a plain object (`null` and arrays included) or a key outside `keys` is
 * `SONIQ_INVALID_OPTIONS` (a typo must not run the call without the option). The caller checks the values.
 */
export function optionsObject(
  options: unknown,
  what: string,
  keys: readonly string[],
): Record<string, unknown> {
  if (options === undefined) return {};
  const list = keys.join(", ");
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `${what} must be an options object { ${list} }.`, {
      context: { value: options },
    });
  }
  const unknown = Object.keys(options).find((k) => !keys.includes(k));
  if (unknown !== undefined) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `${what} has no option "${unknown}" (it takes ${list}).`, {
      context: { key: unknown },
    });
  }
  return options as Record<string, unknown>;
}

type Entry = [string, OptionSpec<never, never, unknown>];
const ENTRIES = new WeakMap<object, Entry[]>();

/** The table's entries, computed once (validation runs on every enqueue that passes options). */
function entries(table: AnyTable): Entry[] {
  let list = ENTRIES.get(table);
  if (!list) {
    list = Object.entries(table);
    ENTRIES.set(table, list);
  }
  return list;
}

/** Every problem with `options` (unknown keys first, then each declared option in order). */
export function optionProblems(table: AnyTable, options: object, what: string): string[] {
  return checkOptions(table, options, what).problems;
}

/** The dotted option path a problem starts with (`webhooks.secretKey.current must ...`), if any. */
const LEADING_PATH = /^[A-Za-z_$][\w$]*(?:\.[\w$]+)*/;

/**
 * `optionProblems` with the option each problem is about (`fields`, one per problem): an unknown key, else the
 * dotted path the problem starts with when it is inside the option whose check reported it (a nested one such
 * as `webhooks.secretKey.current`), else that option.
 */
export function checkOptions(
  table: AnyTable,
  options: object,
  what: string,
): { problems: string[]; fields: string[] } {
  const problems: string[] = [];
  const fields: string[] = [];
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(table, key)) {
      problems.push(`${what} has no option "${key}"`);
      fields.push(key);
    }
  }
  const values = options as Record<string, unknown>;
  for (const [key, spec] of entries(table)) {
    const from = problems.length;
    spec.check(problems, values[key], key);
    for (const problem of problems.slice(from)) {
      const path = LEADING_PATH.exec(problem)?.[0] ?? "";
      fields.push(path === key || path.startsWith(`${key}.`) ? path : key);
    }
  }
  return { problems, fields };
}

/** Given values (normalised) and defaults for the rest, in declaration order; not frozen. */
export function resolveOptions(table: AnyTable, options: object, ctx: unknown): Record<string, unknown> {
  const values = options as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, spec] of entries(table)) {
    if (spec.resolved === false) continue;
    const given = values[key];
    if (given !== undefined) out[key] = spec.normalise ? spec.normalise(given as never) : given;
    else out[key] = spec.default?.(out, ctx as never);
  }
  return out;
}

export function describeTable(table: AnyTable): OptionDoc[] {
  return entries(table).map(([name, spec]) => ({
    name,
    default: spec.defaultDoc,
    meaning: spec.doc,
  }));
}

// ---------------------------------------------------------------------------------------------------
// checks

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);

export const MAX_TIMER_MS = 2_147_483_647;
/** Longest delay core writes (about 100 years), so every backend can store the due time. */
export const MAX_DELAY_MS = 100 * 365 * 24 * 3600 * 1000;
/** The dates core passes to a backend: 0001-01-01 to 9999-12-31 UTC, which every backend (and ISO 8601 text) can hold. */
export const MIN_DATE_MS = Date.parse("0001-01-01T00:00:00.000Z");
export const MAX_DATE_MS = Date.parse("9999-12-31T23:59:59.999Z");

export const intIn =
  (min: number, max: number): Check =>
  (problems, v, label) => {
    if (v !== undefined && (!isInt(v) || v < min || v > max)) {
      problems.push(`${label} must be an integer from ${min} to ${max} (got ${String(v)})`);
    }
  };

export const msIn =
  (min: number, max: number): Check =>
  (problems, v, label) => {
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max)) {
      problems.push(`${label} must be a number of milliseconds from ${min} to ${max} (got ${String(v)})`);
    }
  };

export const checkQueue: Check = (problems, v, label) => {
  if (v !== undefined && (typeof v !== "string" || !QUEUE_NAME_PATTERN.test(v) || v.length > 255)) {
    problems.push(
      `${label} must be a dotted lowercase name like "default" or "emails.bulk" (got ${String(v)})`,
    );
  }
};

export const checkBool: Check = (problems, v, label) => {
  if (v !== undefined && typeof v !== "boolean") problems.push(`${label} must be a boolean`);
};

/** Anything goes (the option's type says what; e.g. `tx`, checked by the backend). */
export const anyValue: Check = () => {};

export const checkPriority = intIn(-2_147_483_648, 2_147_483_647);
export const checkMaxAttempts = intIn(1, 1_000_000);
