/**
 * `soniq.schedules.declare(job, spec)`: the declaration, checked synchronously so a bad schedule fails where it
 * is written. Every problem is reported in one `SONIQ_INVALID_OPTIONS` error; `context.field` names the
 * first bad field and `context.problems` lists them all ("field: problem").
 */
import { SoniqError } from "../common/errors.js";
import { checkJson } from "../common/json.js";
import { isValidJobName, QUEUE_NAME_PATTERN } from "../common/names.js";
import type { CatchUpPolicy } from "../common/types.js";
import { cronOf } from "./ticks.js";

export interface ScheduleSpec<TArgs = unknown> {
  /** A cron expression: 5 fields, or 6 with seconds first. Exclusive with `every`. */
  cron?: string;
  /** An interval: milliseconds (>= 1000), or a duration like `"30s"`, `"15m"`, `"1h"`, `"1h30m"`, `"1d"`. */
  every?: number | string;
  /** IANA timezone the cron expression is read in. Default `"UTC"`. Cron only. */
  timezone?: string;
  /** The args each fired job gets. Default `{}`. */
  args?: TArgs;
  /** The schedule's name (dotted lowercase). Default: the job's name. */
  name?: string;
  /** Default `"latest"`. */
  catchUp?: CatchUpPolicy;
  /** Default: the job's queue. */
  queue?: string;
  /** Default: the job's priority. */
  priority?: number;
}

/** A validated declaration, frozen. */
export interface DeclaredSchedule {
  readonly name: string;
  readonly jobName: string;
  readonly cron: string | null;
  readonly every: number | null;
  readonly timezone: string | null;
  readonly args: unknown;
  readonly queue: string | null;
  readonly priority: number | null;
  readonly catchUp: CatchUpPolicy;
}

const KEYS = ["cron", "every", "timezone", "args", "name", "catchUp", "queue", "priority"];
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(?:\d+(?:ms|s|m|h|d))+$/;
const MIN_EVERY_MS = 1000;
/** Longer than any sensible interval, and far inside Date's range. */
const MAX_EVERY_MS = 366 * 86_400_000;

interface Problem {
  field: string;
  problem: string;
}

/** Milliseconds of an interval (`15000`, `"15s"`, `"1h30m"`), or a problem text. */
export function parseEvery(value: unknown): number | string {
  let ms: number;
  if (typeof value === "number") {
    ms = value;
  } else if (typeof value === "string" && DURATION.test(value)) {
    ms = 0;
    for (const [, n, unit] of value.matchAll(/(\d+)(ms|s|m|h|d)/g))
      ms += Number(n) * (UNIT_MS[unit as string] ?? 0);
  } else {
    return `must be milliseconds or a duration like "30s", "15m", "1h", "1h30m" (got ${JSON.stringify(value)})`;
  }
  if (!Number.isSafeInteger(ms) || ms < MIN_EVERY_MS || ms > MAX_EVERY_MS) {
    return `must be a whole number of milliseconds from ${MIN_EVERY_MS} (1s) to ${MAX_EVERY_MS} (366d) (got ${String(value)})`;
  }
  return ms;
}

/** True when `tz` is an IANA timezone this runtime knows. */
export function isTimezone(tz: unknown): tz is string {
  if (typeof tz !== "string" || tz === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function checkCron(cron: unknown, timezone: string, problems: Problem[]): void {
  if (typeof cron !== "string") {
    problems.push({ field: "cron", problem: `must be a string like "0 9 * * 1-5" (got ${typeof cron})` });
    return;
  }
  try {
    if (cronOf(cron, timezone).nextRun() === null) {
      problems.push({ field: "cron", problem: `"${cron}" never fires` });
    }
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    problems.push({ field: "cron", problem: `"${cron}" is not a 5- or 6-field cron expression (${why})` });
  }
}

function checkCatchUp(value: unknown, problems: Problem[]): CatchUpPolicy {
  if (value === undefined) return "latest";
  if (value === "none" || value === "latest") return value;
  if (typeof value === "object" && value !== null && Object.keys(value).length === 1) {
    const withinMs = (value as { withinMs?: unknown }).withinMs;
    if (typeof withinMs === "number" && Number.isSafeInteger(withinMs) && withinMs > 0) {
      return Object.freeze({ withinMs });
    }
  }
  problems.push({
    field: "catchUp",
    problem: `must be "none", "latest" or { withinMs: <positive integer> } (got ${JSON.stringify(value)})`,
  });
  return "latest";
}

function checkTiming(
  o: ScheduleSpec,
  problems: Problem[],
): { cron: string | null; every: number | null; timezone: string | null } {
  if (o.cron !== undefined && o.every !== undefined) {
    problems.push({ field: "cron", problem: "give either cron or every, not both" });
    return { cron: null, every: null, timezone: null };
  }
  if (o.cron === undefined && o.every === undefined) {
    problems.push({ field: "cron", problem: "give cron (an expression) or every (an interval)" });
    return { cron: null, every: null, timezone: null };
  }
  if (o.every !== undefined) {
    if (o.timezone !== undefined) {
      problems.push({
        field: "timezone",
        problem: "applies to cron only; an interval is the same in every timezone",
      });
    }
    const every = parseEvery(o.every);
    if (typeof every === "string") problems.push({ field: "every", problem: every });
    return { cron: null, every: typeof every === "number" ? every : null, timezone: null };
  }
  const timezone = o.timezone === undefined ? "UTC" : o.timezone;
  if (!isTimezone(timezone)) {
    problems.push({
      field: "timezone",
      problem: `must be an IANA timezone like "Europe/Berlin" (got ${JSON.stringify(o.timezone)})`,
    });
    return { cron: null, every: null, timezone: null };
  }
  checkCron(o.cron, timezone, problems);
  return { cron: o.cron as string, every: null, timezone };
}

/** Validates `schedules.declare()` specs for the job `jobName`. Throws `SONIQ_INVALID_OPTIONS`. */
export function declareSchedule(jobName: string, options: ScheduleSpec): DeclaredSchedule {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      "schedules.declare() needs a spec: { cron } or { every }.",
      {
        context: { field: "options", problems: ["options: pass { cron } or { every }"] },
      },
    );
  }
  const problems: Problem[] = [];
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) problems.push({ field: key, problem: "is not a schedules.declare() option" });
  }
  const timing = checkTiming(options, problems);
  const name = options.name === undefined ? jobName : options.name;
  if (!isValidJobName(name)) {
    problems.push({
      field: "name",
      problem: `must be dotted lowercase like "reports.nightly" (got ${JSON.stringify(name)})`,
    });
  }
  const q = options.queue;
  if (q !== undefined && (typeof q !== "string" || q.length > 255 || !QUEUE_NAME_PATTERN.test(q))) {
    problems.push({ field: "queue", problem: `must be a dotted lowercase name (got ${JSON.stringify(q)})` });
  }
  const p = options.priority;
  if (p !== undefined && (!Number.isSafeInteger(p) || p < -2_147_483_648 || p > 2_147_483_647)) {
    problems.push({ field: "priority", problem: `must be a 32-bit integer (got ${String(p)})` });
  }
  const args = checkJson(options.args === undefined ? {} : options.args);
  if (!args.ok) problems.push({ field: "args", problem: `${args.problem.path}: ${args.problem.problem}` });
  const catchUp = checkCatchUp(options.catchUp, problems);
  if (problems.length > 0) {
    const lines = problems.map((p) => `${p.field}: ${p.problem}`);
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      `Invalid schedules.declare("${jobName}") spec: ${lines.join("; ")}.`,
      {
        context: {
          field: problems[0]?.field,
          fields: problems.map((p) => p.field),
          problems: lines,
          jobName,
        },
      },
    );
  }
  return Object.freeze({
    name,
    jobName,
    ...timing,
    args: args.ok ? args.value : {},
    queue: q ?? null,
    priority: p ?? null,
    catchUp,
  });
}
