/**
 * Job args and results are stored as JSON. Core checks values before they reach a backend, so every
 * backend stores the same thing and a bad value fails at enqueue, not inside a batch write.
 *
 * Accepted: null, booleans, finite numbers, strings, arrays, and plain objects (prototype
 * `Object.prototype` or `null`). Object properties whose value is `undefined` are dropped, as
 * `JSON.stringify` does. Rejected: `undefined` at the top level or inside arrays, functions, symbols,
 * BigInt, NaN/Infinity, cycles, and non-plain objects (Date, Map, Set, class instances, Buffers):
 * those do not survive a JSON round trip unchanged, so pass `date.toISOString()` and similar instead.
 * Strings (and keys) holding a NUL character or a lone surrogate are rejected too: Postgres cannot store
 * them, and every backend stores the same values.
 */
import { createHash } from "node:crypto";

export interface JsonProblem {
  /** Where the bad value sits, e.g. `$.items[2].when`. */
  path: string;
  problem: string;
}

/** A NUL, or a UTF-16 surrogate without its pair. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const STRING_PROBLEM = "a string with a NUL character or a lone surrogate cannot be stored";

/** `text` with every NUL and lone surrogate replaced by U+FFFD, so any backend can store it. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(new RegExp(UNSTORABLE.source, "g"), "\ufffd") : text;
}

/** Deepest nesting of arrays and objects accepted (deeper values would overflow recursive parsers). */
export const MAX_JSON_DEPTH = 256;

interface WalkState {
  seen: Set<object>;
  droppedUndefined: boolean;
  depth: number;
}

/**
 * A problem found by the walk, with the path to it as segments from the bad value outwards (`[2]`, `.items`).
 * The path is written only once something is wrong: building it for every key of every valid value was a
 * string per key on the enqueue's hot path.
 */
interface Found {
  outwards: string[];
  problem: string;
  /** The depth limit: its path is shortened. */
  deep?: true;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  const proto = Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null;
  return proto?.constructor?.name ?? "object";
}

function walk(value: unknown, state: WalkState): Found | null {
  switch (typeof value) {
    case "string":
      return UNSTORABLE.test(value) ? { outwards: [], problem: STRING_PROBLEM } : null;
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : { outwards: [], problem: `${value} is not a finite number` };
    case "undefined":
      return { outwards: [], problem: "undefined is not JSON" };
    case "bigint":
      return { outwards: [], problem: "BigInt is not JSON (pass it as a string)" };
    case "function":
    case "symbol":
      return { outwards: [], problem: `a ${typeof value} is not JSON` };
  }
  if (value === null) return null;
  const obj = value as object;
  if (state.seen.has(obj)) return { outwards: [], problem: "circular reference" };
  if (state.depth >= MAX_JSON_DEPTH) {
    return { outwards: [], problem: `nested deeper than ${MAX_JSON_DEPTH} levels`, deep: true };
  }
  state.depth++;
  const found = walkContainer(obj, state);
  state.depth--;
  return found;
}

function walkContainer(obj: object, state: WalkState): Found | null {
  if (Array.isArray(obj)) {
    state.seen.add(obj);
    for (let i = 0; i < obj.length; i++) {
      const found = walk(obj[i], state);
      if (found) {
        found.outwards.push(`[${i}]`);
        return found;
      }
    }
    state.seen.delete(obj);
    return null;
  }
  const proto = Object.getPrototypeOf(obj);
  if (proto !== Object.prototype && proto !== null) {
    return { outwards: [], problem: `a ${describe(obj)} is not a plain object (convert it to JSON first)` };
  }
  state.seen.add(obj);
  for (const key of Object.keys(obj)) {
    if (UNSTORABLE.test(key)) return { outwards: [`.${key}`], problem: STRING_PROBLEM };
    const v = (obj as Record<string, unknown>)[key];
    if (v === undefined) {
      state.droppedUndefined = true;
      continue;
    }
    const found = walk(v, state);
    if (found) {
      found.outwards.push(`.${key}`);
      return found;
    }
  }
  state.seen.delete(obj);
  return null;
}

/** The problem as reported: its path from the root (`$.items[2].when`), shortened past the depth limit. */
function located(found: Found): JsonProblem {
  const path = `$${found.outwards.reverse().join("")}`;
  return {
    path: found.deep && path.length > 80 ? `${path.slice(0, 80)}...` : path,
    problem: found.problem,
  };
}

/**
 * Checks that `value` is JSON. Returns the value to store (a copy without `undefined` properties when
 * there were any, else `value` itself) or the first problem found.
 */
export function checkJson(
  value: unknown,
): { ok: true; value: unknown } | { ok: false; problem: JsonProblem } {
  if (value === null || typeof value === "boolean") return { ok: true, value };
  const state: WalkState = { seen: new Set(), droppedUndefined: false, depth: 0 };
  const found = walk(value, state);
  if (found) return { ok: false, problem: located(found) };
  return { ok: true, value: state.droppedUndefined ? JSON.parse(JSON.stringify(value)) : value };
}

function escapeNonAscii(json: string): string {
  // Python's json.dumps(ensure_ascii=True) escapes everything outside printable ASCII as \uXXXX.
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return escapeNonAscii(JSON.stringify(value));
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${escapeNonAscii(JSON.stringify(k))}:${canonical(obj[k])}`).join(",")}}`;
}

/**
 * Canonical JSON text of a JSON value: object keys sorted, no whitespace, non-ASCII escaped as
 * `\uXXXX`. Matches Python's `json.dumps(v, sort_keys=True, separators=(",", ":"))` for the values
 * both languages represent alike (JS cannot tell `42.0` from `42`; Python writes `42.0`).
 */
export function canonicalJson(value: unknown): string {
  return canonical(value);
}

/** sha256 hex of the canonical JSON: the `args_hash` that `unique` jobs deduplicate on. */
export function argsHash(args: unknown): string {
  return createHash("sha256").update(canonical(args)).digest("hex");
}
