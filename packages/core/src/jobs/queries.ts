/**
 * The public list filters and their one normalisation: every rule about paging and filter shapes lives
 * here, so backends receive complete, validated queries (`JobListQuery`, `DeadLetterListQuery`) and
 * never re-check them. Bad input is a `SONIQ_INVALID_ARGUMENT` naming the key; nothing is written.
 *
 * Paging: lists are newest first. Jobs by id descending (UUIDv7 ids are time-ordered: creation order);
 * dead letters by `movedToDeadLetterAt` at millisecond precision, ties by id descending. `offset` pages
 * are kept for compatibility; keyset pages (`after` / `before` a row) cost the same at any depth and
 * neither skip nor repeat rows when rows arrive meanwhile.
 */

import { SoniqError } from "../common/errors.js";
import { isJobId } from "../common/ids.js";
import { storableText } from "../common/json.js";
import { MAX_DATE_MS, MIN_DATE_MS } from "../common/option-table.js";
import type {
  DeadLetterListQuery,
  DeadLetterMatch,
  JobListQuery,
  ListPosition,
  StatsQuery,
} from "../contract/index.js";
import { JOB_STATUSES, type JobStatus } from "../schema/constants.js";

/** Rows per page when a list call gives no `limit`. */
export const DEFAULT_PAGE_SIZE = 100;
/** The largest `limit` a list call takes (larger ones are capped). */
export const MAX_PAGE_SIZE = 1000;

/**
 * A job's place in `jobs.list` order. A `Job` is one: pass a page's last (or first) job as is. Jobs list
 * by id, so the id places it; `createdAt` is still validated but not compared.
 */
export interface JobPosition {
  createdAt: Date;
  id: string;
}

/** A dead letter's place in `deadLetters.list` order. A `DeadLetterJob` is one. */
export interface DeadLetterPosition {
  movedToDeadLetterAt: Date;
  id: string;
}

export interface ListJobsFilter {
  status?: JobStatus | readonly JobStatus[];
  queue?: string;
  jobName?: string;
  /** Text search: jobs whose id, job name or last error contains this text, ignoring case (`%`, `_` are literal). */
  q?: string;
  /** Only the jobs with these ids (at most 1000 UUIDs; an empty list matches nothing). */
  ids?: readonly string[];
  /** Default 100, at most 1000 (larger values are capped). */
  limit?: number;
  /** Rows to skip (kept for compatibility; deep offsets cost what OFFSET costs). Not with `after`/`before`. */
  offset?: number;
  /** Keyset paging: the jobs after this one in the list (older ones; the next page). Pass a page's last job. */
  after?: JobPosition;
  /** The jobs before this one (newer ones; the previous page), still newest first. Pass a page's first job. */
  before?: JobPosition;
}

export interface DeadLetterFilter {
  jobName?: string;
  queue?: string;
  reason?: string;
  /** Moved at or after this instant. */
  since?: Date;
  /** Moved before this instant. */
  until?: Date;
  /** Text search: rows whose id, job name or last error contains this text, ignoring case (`%`, `_` are literal). */
  q?: string;
  /** Only the rows with these ids (at most 1000 UUIDs; an empty list matches nothing). */
  ids?: readonly string[];
  /** Default 100, at most 1000 (larger values are capped). */
  limit?: number;
  /** Rows to skip (kept for compatibility). Not with `after`/`before`. */
  offset?: number;
  /** Keyset paging: the rows after this one (moved earlier; the next page). Pass a page's last row. */
  after?: DeadLetterPosition;
  /** The rows before this one (moved later; the previous page), still newest first. */
  before?: DeadLetterPosition;
}

export function invalid(what: string, message: string, value: unknown): SoniqError {
  return new SoniqError("SONIQ_INVALID_ARGUMENT", `${what}: ${message}`, { context: { field: what, value } });
}

/** A call that takes no argument refuses one (`list(filter)` on a list without filters is a mistake). */
export function noArguments(args: readonly unknown[], what: string, why: string): void {
  const given = args.find((a) => a !== undefined);
  if (given !== undefined) throw invalid(what, why, given);
}

export function filterObject(
  filter: unknown,
  what: string,
  keys: readonly string[],
): Record<string, unknown> {
  if (filter === undefined) return {};
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
    throw invalid(what, "expected a filter object (or nothing)", filter);
  }
  const unknown = Object.keys(filter).filter((k) => !keys.includes(k));
  if (unknown.length > 0) {
    throw invalid(`${what}.${unknown[0]}`, `unknown filter key; known keys are ${keys.join(", ")}`, unknown);
  }
  return filter as Record<string, unknown>;
}

/** A filter string: non-empty, and without a NUL or a lone surrogate (no stored name holds one). */
export function optionalString(value: unknown, what: string): string | null {
  if (value === undefined) return null;
  if (typeof value !== "string" || value.length === 0)
    throw invalid(what, "expected a non-empty string", value);
  if (storableText(value) !== value)
    throw invalid(what, "expected a string without a NUL character or a lone surrogate", value);
  return value;
}

/** A filter date: valid, and between the years 1 and 9999 (what every backend can compare with). */
export function optionalDate(value: unknown, what: string): Date | null {
  if (value === undefined) return null;
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    throw invalid(what, "expected a valid Date", value);
  if (value.getTime() < MIN_DATE_MS || value.getTime() > MAX_DATE_MS)
    throw invalid(what, "expected a Date between the years 1 and 9999", value);
  return value;
}

/** The most ids an `ids` filter takes (one page: a list answers them all at once). */
export const MAX_FILTER_IDS = MAX_PAGE_SIZE;

/** An `ids` filter: at most `MAX_FILTER_IDS` UUIDs, lower-cased and deduplicated; `[]` stays (it matches nothing). */
export function optionalIds(value: unknown, what: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value)) throw invalid(what, "expected an array of ids (UUIDs)", value);
  if (value.length > MAX_FILTER_IDS) {
    throw invalid(what, `expected at most ${MAX_FILTER_IDS} ids; page through larger sets`, value.length);
  }
  const bad = value.findIndex((id) => !isJobId(id));
  if (bad >= 0) throw invalid(what, `expected every id to be a UUID (item ${bad} is not)`, value[bad]);
  return [...new Set((value as string[]).map((id) => id.toLowerCase()))];
}

/** `after` / `before` as a backend position (`atKey` names the row's instant), or null. */
function position(filter: Record<string, unknown>, what: string, atKey: string): ListPosition | null {
  const { after, before } = filter;
  if (after !== undefined && before !== undefined) {
    throw invalid(`${what}.before`, "page with after or before, not both", before);
  }
  const key = after !== undefined ? "after" : "before";
  const raw = after ?? before;
  if (raw === undefined) return null;
  if (filter.offset !== undefined && filter.offset !== 0) {
    throw invalid(
      `${what}.offset`,
      `offset and ${key} do not combine; page by one or the other`,
      filter.offset,
    );
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw invalid(`${what}.${key}`, `expected the row to page from (or { ${atKey}, id })`, raw);
  }
  const at = (raw as Record<string, unknown>)[atKey];
  const id = (raw as Record<string, unknown>).id;
  if (!(at instanceof Date) || !(at.getTime() >= MIN_DATE_MS && at.getTime() <= MAX_DATE_MS)) {
    throw invalid(`${what}.${key}.${atKey}`, "expected a valid Date between the years 1 and 9999", at);
  }
  if (!isJobId(id)) throw invalid(`${what}.${key}.id`, "expected a row id (a UUID)", id);
  return { at: new Date(at.getTime()), id: id.toLowerCase(), direction: key === "after" ? "older" : "newer" };
}

/** The position right after a row (its older neighbours come next). */
export function after(row: { id: string }, at: Date): ListPosition {
  return { at, id: row.id, direction: "older" };
}

/**
 * A backend answers a `newer` page nearest row first (oldest first, so it can stop at `limit`); every
 * list is newest first to its callers, so core turns that page around.
 */
export function inListOrder<T>(query: { position: ListPosition | null }, rows: T[]): T[] {
  return query.position?.direction === "newer" ? rows.reverse() : rows;
}

function page(filter: Record<string, unknown>, what: string): { limit: number; offset: number } {
  const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
  const offset = filter.offset ?? 0;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw invalid(`${what}.limit`, "expected an integer >= 1", limit);
  }
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) {
    throw invalid(`${what}.offset`, "expected an integer >= 0", offset);
  }
  return { limit: Math.min(limit, MAX_PAGE_SIZE), offset };
}

const JOB_FILTER_KEYS = [
  "status",
  "queue",
  "jobName",
  "q",
  "ids",
  "limit",
  "offset",
  "after",
  "before",
] as const;
const DEAD_LETTER_MATCH_KEYS = ["jobName", "queue", "reason", "since", "until", "q", "ids"] as const;
const DEAD_LETTER_FILTER_KEYS = [...DEAD_LETTER_MATCH_KEYS, "limit", "offset", "after", "before"] as const;

export function jobListQuery(filter: ListJobsFilter | undefined, what = "jobs.list(filter)"): JobListQuery {
  const f = filterObject(filter, what, JOB_FILTER_KEYS);
  let statuses: JobStatus[] | null = null;
  if (f.status !== undefined) {
    const list = Array.isArray(f.status) ? f.status : [f.status];
    if (list.length === 0) throw invalid(`${what}.status`, "expected a status or a non-empty list", f.status);
    for (const s of list) {
      if (!(JOB_STATUSES as readonly unknown[]).includes(s)) {
        throw invalid(`${what}.status`, `expected one of ${JOB_STATUSES.join(", ")}`, s);
      }
    }
    statuses = [...new Set(list as JobStatus[])];
  }
  return {
    statuses,
    queue: optionalString(f.queue, `${what}.queue`),
    jobName: optionalString(f.jobName, `${what}.jobName`),
    q: optionalString(f.q, `${what}.q`),
    ids: optionalIds(f.ids, `${what}.ids`),
    ...page(f, what),
    position: position(f, what, "createdAt"),
  };
}

export function deadLetterListQuery(
  filter: DeadLetterFilter | undefined,
  what = "deadLetters.list(filter)",
): DeadLetterListQuery {
  const f = filterObject(filter, what, DEAD_LETTER_FILTER_KEYS);
  return {
    ...deadLetterMatch(f, what),
    ...page(f, what),
    position: position(f, what, "movedToDeadLetterAt"),
  };
}

/** The filter part of a dead-letter query (what a bulk operation or a count matches), validated. */
export function deadLetterMatch(filter: unknown, what: string): DeadLetterMatch {
  const f = filterObject(filter, what, DEAD_LETTER_FILTER_KEYS);
  return {
    jobName: optionalString(f.jobName, `${what}.jobName`),
    queue: optionalString(f.queue, `${what}.queue`),
    reason: optionalString(f.reason, `${what}.reason`),
    since: optionalDate(f.since, `${what}.since`),
    until: optionalDate(f.until, `${what}.until`),
    q: optionalString(f.q, `${what}.q`),
    ids: optionalIds(f.ids, `${what}.ids`),
  };
}

export function statsQuery(filter: { queue?: string } | undefined, what = "jobs.stats(filter)"): StatsQuery {
  const f = filterObject(filter, what, ["queue"]);
  return { queue: optionalString(f.queue, `${what}.queue`) };
}
