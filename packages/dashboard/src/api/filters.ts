/** Turns query strings (and bulk bodies) into validated job and dead-letter queries. */
import type { DeadLetterQuery } from "../data/dead-letters.js";
import type { JobQuery } from "../data/jobs.js";
import { badRequest } from "../errors.js";
import { decodeCursor } from "../paging.js";
import { parseInstant, parseJobName, parseLimit, parseQueue, parseStatuses, parseText } from "../query.js";

export type Params = Record<string, string | undefined>;

export function jobQuery(p: Params): JobQuery {
  return {
    status: parseStatuses(p.status),
    queue: parseQueue(p.queue),
    name: parseJobName(p.name),
    q: parseText(p.q, "q"),
    limit: parseLimit(p.limit),
    cursor: decodeCursor(p.cursor),
  };
}

export function deadLetterQuery(p: Params): DeadLetterQuery {
  const since = parseInstant(p.since, "since");
  const until = parseInstant(p.until, "until");
  if (since && until && since.getTime() >= until.getTime()) throw badRequest("since must be before until");
  return {
    queue: parseQueue(p.queue),
    name: parseJobName(p.name),
    reason: parseText(p.reason, "reason", 64),
    since,
    until,
    q: parseText(p.q, "q"),
  };
}

/** A bulk body's `filter` holds the same keys as the list's query string, as strings. */
export function deadLetterQueryFromBody(raw: Record<string, unknown>): DeadLetterQuery {
  const params: Params = {};
  for (const key of ["queue", "name", "reason", "since", "until", "q"]) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== "string") throw badRequest(`filter.${key} must be a string`);
    params[key] = v;
  }
  const unknown = Object.keys(raw).filter((k) => !(k in params) && raw[k] !== undefined && raw[k] !== null);
  if (unknown.length > 0) throw badRequest(`Unknown filter keys: ${unknown.join(", ")}`);
  return deadLetterQuery(params);
}

export function deadLetterSearch(p: Params): string {
  const out = new URLSearchParams();
  for (const key of ["queue", "name", "reason", "since", "until", "q", "limit"]) {
    const v = p[key];
    if (v) out.set(key, v);
  }
  return out.toString();
}
