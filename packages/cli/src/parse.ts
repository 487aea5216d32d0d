/** Flag parsers: a bad value is a usage error (exit 2) that names the flag. */
import { JOB_STATUSES, type JobStatus } from "@soniq/core";
import { parseDuration, parsePastInstant } from "@soniq/core/ops";
import { usage } from "./errors.js";

export function positiveInt(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 1) throw usage(`${flag} takes a whole number >= 1 (got "${value}").`);
    return n;
  };
}

export function statuses(value: string): JobStatus[] {
  const list = value.split(",").map((s) => s.trim());
  for (const s of list) {
    if (!(JOB_STATUSES as readonly string[]).includes(s)) {
      throw usage(`--status takes ${JOB_STATUSES.join(", ")} (comma-separated); got "${s}".`);
    }
  }
  return list as JobStatus[];
}

export function list(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Milliseconds from "500ms", "30s", "15m", "2h", "7d", "1m" (core's `parseDuration`). */
export function durationMs(flag: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === null) throw usage(`${flag} takes a duration like 30s, 15m, 2h or 7d (got "${value}").`);
  return ms;
}

/** `--since`: an ISO date, or a duration meaning "that long ago" (core's `parsePastInstant`). */
export function since(now: number): (value: string) => Date {
  return (value) => {
    const date = parsePastInstant(value, now);
    if (!date) {
      throw usage(`--since takes an ISO date (2026-12-01T09:00Z) or a duration (2h, 7d); got "${value}".`);
    }
    return date;
  };
}

/** `--rate 100/1m`: at most 100 starts per minute. "off" clears the limit. */
export function rate(value: string): { max: number; perMs: number } | null {
  if (value === "off" || value === "none") return null;
  const m = /^(\d+)\/(.+)$/.exec(value.trim());
  if (!m || Number(m[1]) < 1)
    throw usage(`--rate takes <max>/<window>, e.g. 100/1m, or "off" (got "${value}").`);
  return { max: Number(m[1]), perMs: durationMs("--rate", m[2] as string) };
}

/**
 * A flag's JSON value (`--payload`). A value that does not parse is a usage error naming the flag and, when the
 * parser says, where; the text itself is never echoed (a payload may carry a secret, and error lines get logged).
 */
export function jsonValue(flag: string): (value: string) => unknown {
  return (value) => {
    try {
      return JSON.parse(value) as unknown;
    } catch (err) {
      const at = /at position (\d+)/.exec(err instanceof Error ? err.message : "");
      const where = at ? ` at character ${Number(at[1]) + 1}` : "";
      throw usage(
        `${flag} takes JSON (e.g. '{"by":"ops"}', quoted for your shell); what was given does not parse${where}.`,
      );
    }
  };
}

/** A flag's JSON object (`--resolve '{"charge_card":{"id":"manual-1"}}'`): anything else is a usage error. */
export function jsonObject(flag: string, shape: string): (value: string) => Record<string, unknown> {
  const parse = jsonValue(flag);
  return (value) => {
    const parsed = parse(value);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      const kind = Array.isArray(parsed) ? "an array" : parsed === null ? "null" : `a ${typeof parsed}`;
      throw usage(`${flag} takes a JSON object ${shape} (got ${kind}).`);
    }
    return parsed as Record<string, unknown>;
  };
}
