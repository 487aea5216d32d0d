/** The paged, filtered SELECT behind listJobs and listDeadLetterJobs. */
import { SoniqError } from "@soniq/core";

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** Validated `limit` / `offset` of a list filter: default 100, capped at 1000. */
export function pageOf(operation: string, filter: { limit?: number; offset?: number }) {
  const limit = filter.limit ?? DEFAULT_LIMIT;
  const offset = filter.offset ?? 0;
  const problems: string[] = [];
  if (!Number.isSafeInteger(limit) || limit < 0) problems.push("limit must be an integer >= 0");
  if (!Number.isSafeInteger(offset) || offset < 0) problems.push("offset must be an integer >= 0");
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", `${operation}(): ${problems.join("; ")}.`, {
      context: { limit, offset, problems },
    });
  }
  return { limit: Math.min(limit, MAX_LIMIT), offset };
}

/** One condition of a list filter: SQL with one `?` standing for its value. */
export type Condition = readonly [clause: string, value: unknown];

/**
 * One page of `select` (a `SELECT ... FROM ...`): the conditions joined with AND (their `?` numbered as
 * parameters in order), then ORDER BY `orderBy`, LIMIT and OFFSET.
 */
export function listQuery(
  select: string,
  conditions: readonly Condition[],
  orderBy: string,
  page: { limit: number; offset: number },
): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  for (const [clause, value] of conditions) {
    values.push(value);
    where.push(clause.replace("?", `$${values.length}`));
  }
  values.push(page.limit, page.offset);
  return {
    text: `${select}
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${orderBy}
      LIMIT $${values.length - 1} OFFSET $${values.length}`,
    values,
  };
}
