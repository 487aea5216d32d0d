/**
 * `redact`: what operators see of a job's args, result, progress and errors. The handler and the store
 * keep the real values; the dashboard, the CLI (show, list, export), the worker log and explain's evidence
 * show them through `soniq.options.redact`.
 *
 * Two forms:
 * - field paths, e.g. `["password", "card.number", "**.token", "headers.*"]`: dotted keys from the top of
 *   args, result and progress; `*` matches any one key or array index, `**` any depth (zero or more keys).
 *   Keys match whatever their case (`"**.password"` hides `Password` and `PASSWORD` too): a secret shown
 *   because of its key's case is worse than a same-named harmless value hidden. A matched value becomes
 *   "[redacted]". Error texts have every string value a path removed (4+ characters) from the same row's
 *   args or result replaced by "[redacted]" too.
 * - a function `(value, { field, jobName }) => shown`, called for `field` "args", "result", "progress"
 *   and "error" (the error text; a non-string answer is shown as JSON).
 * Either way a row's `dedupKey` or `group` that quotes a value redact hid (one of 4+ characters that its args,
 * result or progress held and the shown ones do not) shows as "[redacted]", and such values are scrubbed from
 * the strings inside a dead letter's `tags`. The other fields are shown as stored.
 * A redact function that throws shows "[redaction failed]": it fails closed, never showing the raw value.
 */

import type { RedactableRow, RedactField, Redactor } from "../common/redactor.js";

export type { RedactableRow, RedactField, Redactor } from "../common/redactor.js";

export const REDACTED = "[redacted]";
export const REDACTION_FAILED = "[redaction failed]";

export interface RedactContext {
  readonly field: RedactField;
  readonly jobName: string;
}

export type RedactFunction = (value: unknown, context: RedactContext) => unknown;

/** `new Soniq({ redact })`: a function over args, results, progress and errors, or field paths. */
export type RedactOption = RedactFunction | readonly string[];

const PATH_SEGMENT = /^[^.\s]+$/;
const MAX_DEPTH = 64;
const MIN_SECRET_LENGTH = 4;

/** The problems of a `redact` option (empty when fine). */
export function redactOptionProblems(value: unknown): string[] {
  if (value === undefined || typeof value === "function") return [];
  if (!Array.isArray(value)) return ["redact must be a function or an array of field paths"];
  const bad = value.filter(
    (p) => typeof p !== "string" || p === "" || !p.split(".").every((s) => PATH_SEGMENT.test(s)),
  );
  return bad.length > 0
    ? [
        `redact paths must be dotted keys like "card.number" or "**.token" (bad: ${bad.map(String).join(", ")})`,
      ]
    : [];
}

const IDENTITY: Redactor = Object.freeze({
  active: false,
  row: <T extends RedactableRow>(row: T): T => row,
  value: (_field: RedactField, value: unknown) => value,
  error: (text: string | null) => text,
});

export function createRedactor(option: RedactOption | undefined): Redactor {
  if (option === undefined) return IDENTITY;
  return typeof option === "function" ? functionRedactor(option) : pathRedactor(option);
}

function has(row: RedactableRow, key: keyof RedactableRow): boolean {
  return Object.hasOwn(row, key);
}

function functionRedactor(fn: RedactFunction): Redactor {
  const call = (value: unknown, field: RedactField, jobName: string): unknown => {
    try {
      return fn(value, { field, jobName });
    } catch {
      return REDACTION_FAILED;
    }
  };
  const error = (text: string | null, jobName: string): string | null => {
    if (text === null) return null;
    const shown = call(text, "error", jobName);
    if (shown === null || shown === undefined) return null;
    return typeof shown === "string" ? shown : JSON.stringify(shown);
  };
  return Object.freeze({
    active: true,
    value: (field: Exclude<RedactField, "error">, value: unknown, jobName: string) =>
      call(value, field, jobName),
    error,
    row<T extends RedactableRow>(row: T): T {
      const out = { ...row } as Record<string, unknown>;
      const raw = new Set<string>();
      const shown = new Set<string>();
      for (const field of ["args", "result", "progress"] as const) {
        if (!has(row, field)) continue;
        out[field] = call(row[field], field, row.jobName);
        collect(row[field], raw, 0);
        collect(out[field], shown, 0);
      }
      if (has(row, "lastError")) out.lastError = error(row.lastError ?? null, row.jobName);
      hideArgsHash(row, out);
      // What the function hid: the values the row held that the shown fields no longer do.
      hideQuoted(row, out, new Set([...raw].filter((v) => !shown.has(v))));
      return out as T;
    },
  });
}

/** Whether `path` (keys from the top) matches `pattern` (segments with `*` and `**`). */
function matches(pattern: readonly string[], path: readonly string[], p = 0, k = 0): boolean {
  if (p === pattern.length) return k === path.length;
  const segment = pattern[p];
  if (segment === "**") {
    for (let skip = k; skip <= path.length; skip++) if (matches(pattern, path, p + 1, skip)) return true;
    return false;
  }
  if (k === path.length) return false;
  return (segment === "*" || segment === path[k]?.toLowerCase()) && matches(pattern, path, p + 1, k + 1);
}

function pathRedactor(paths: readonly string[]): Redactor {
  // Keys match whatever their case: each segment is compared lowercased (`*` and `**` are unchanged).
  const patterns = paths.map((p) => p.split(".").map((s) => s.toLowerCase()));
  const walk = (value: unknown, path: string[], secrets: Set<string>): unknown => {
    if (path.length > 0 && patterns.some((pattern) => matches(pattern, path))) {
      collect(value, secrets, 0);
      return REDACTED;
    }
    if (typeof value !== "object" || value === null) return value;
    // Deeper than the walk goes, nothing could be checked: the subtree is hidden whole (fail closed).
    if (path.length >= MAX_DEPTH && !(value instanceof Date)) return REDACTED;
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, String(i)], secrets));
    if (value instanceof Date) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = walk(v, [...path, key], secrets);
    return out;
  };
  const secretsOf = (row: RedactableRow): Set<string> => {
    const secrets = new Set<string>();
    for (const field of ["args", "result", "progress"] as const)
      if (has(row, field)) walk(row[field], [], secrets);
    return secrets;
  };
  return Object.freeze({
    active: true,
    value: (_field: Exclude<RedactField, "error">, value: unknown) => walk(value, [], new Set()),
    error: (text: string | null, _jobName: string, secretsFrom?: RedactableRow) =>
      scrub(text, secretsFrom ? secretsOf(secretsFrom) : new Set()),
    row<T extends RedactableRow>(row: T): T {
      const secrets = new Set<string>();
      const out = { ...row } as Record<string, unknown>;
      for (const field of ["args", "result", "progress"] as const) {
        if (has(row, field)) out[field] = walk(row[field], [], secrets);
      }
      if (has(row, "lastError")) out.lastError = scrub(row.lastError ?? null, secrets);
      hideArgsHash(row, out);
      hideQuoted(row, out, secrets);
      return out as T;
    },
  });
}

/**
 * A job's `argsHash` is a hash of its raw args: beside redacted args a short secret falls to guessing (a
 * six-digit code to a million hashes), so a redacting view hides it too.
 */
function hideArgsHash(row: object, out: Record<string, unknown>): void {
  const hash = (row as { argsHash?: unknown }).argsHash;
  if (typeof hash === "string") out.argsHash = REDACTED;
}

/** `text` with every one of `secrets` in it replaced by "[redacted]" (the longest first). */
export function scrub(text: string | null, secrets: ReadonlySet<string>): string | null {
  if (text === null) return null;
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length))
    out = out.split(secret).join(REDACTED);
  return out;
}

/** Strings and numbers inside `value` with `secrets` scrubbed (deeper than the walk goes: hidden whole). */
function scrubDeep(value: unknown, secrets: ReadonlySet<string>, depth: number): unknown {
  if (typeof value === "string") return scrub(value, secrets);
  if (typeof value === "number" || typeof value === "bigint")
    return secrets.has(String(value)) ? REDACTED : value;
  if (typeof value !== "object" || value === null || value instanceof Date) return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, secrets, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, secrets, depth + 1)]));
}

/**
 * A `dedupKey`, a `group` or dead-letter `tags` often quote the args (`invite:ann@example.com`,
 * `tenant:ann@example.com`): a dedup key or group holding a hidden value is hidden whole (a part of it left would
 * still narrow the guess), tags have those values scrubbed.
 */
function hideQuoted(row: RedactableRow, out: Record<string, unknown>, secrets: ReadonlySet<string>): void {
  if (secrets.size === 0) return;
  for (const field of ["dedupKey", "group"] as const) {
    const text = row[field];
    if (typeof text === "string" && [...secrets].some((secret) => text.includes(secret)))
      out[field] = REDACTED;
  }
  if (typeof row.tags === "object" && row.tags !== null) out.tags = scrubDeep(row.tags, secrets, 0);
}

/** Every string (4+ characters) inside a removed value, to scrub from error texts. */
export function collect(value: unknown, secrets: Set<string>, depth = 0): void {
  if (typeof value === "string") {
    if (value.length >= MIN_SECRET_LENGTH) secrets.add(value);
  } else if (typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    if (text.length >= MIN_SECRET_LENGTH) secrets.add(text);
  } else if (typeof value === "object" && value !== null && depth < MAX_DEPTH) {
    for (const v of Object.values(value)) collect(v, secrets, depth + 1);
  }
}
