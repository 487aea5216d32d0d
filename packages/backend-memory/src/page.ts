import { invalidArgument } from "./errors.js";

export interface Page {
  limit: number;
  offset: number;
}

/** Listing bounds shared by jobs and dead-letter jobs: limit defaults to 100 and is capped at 1000. */
export function pageOf(filter: { limit?: number; offset?: number } | undefined): Page {
  const limit = filter?.limit ?? 100;
  const offset = filter?.offset ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw invalidArgument(`limit must be an integer >= 1, got ${String(limit)}.`, { limit });
  }
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw invalidArgument(`offset must be an integer >= 0, got ${String(offset)}.`, { offset });
  }
  return { limit: Math.min(limit, 1000), offset };
}

/** Newest first, insertion order breaking ties, then the page. */
export function newestFirst<T extends { seq: number }>(rows: T[], at: (row: T) => number, page: Page): T[] {
  rows.sort((a, b) => at(b) - at(a) || b.seq - a.seq);
  return rows.slice(page.offset, page.offset + page.limit);
}
