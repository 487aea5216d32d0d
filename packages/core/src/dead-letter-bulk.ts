/**
 * Bulk dead-letter operations by filter (`deadLetter.replayWhere` / `purgeWhere`). They walk the matching
 * rows in pages of `BULK_CHUNK` ids (never the whole set in memory), act on each id, and write ONE audit
 * row for the whole operation with the count. The rows are fixed at the start: only rows moved to the
 * dead-letter table before the call began are touched, so rows arriving meanwhile neither shift the pages
 * nor get acted on. A dry run counts what would be touched and changes nothing (its audit row says so).
 * With `onProgress`, the matches are counted first (one more read pass) so the callback can say done of total.
 */

import { type ActorOptions, actorOf, auditRecord } from "./audit.js";
import type { Backend, DeadLetterListQuery } from "./backend.js";
import { fail } from "./options.js";
import { type DeadLetterFilter, deadLetterListQuery, invalid } from "./queries.js";

export const BULK_CHUNK = 500;

/** The filter of a bulk operation: the list filter without paging. */
export type DeadLetterBulkFilter = Omit<DeadLetterFilter, "limit" | "offset">;

export interface BulkOptions extends ActorOptions {
  /** Count the rows it would touch, change nothing. */
  dryRun?: boolean;
  /**
   * Called as the rows are handled: `done` of `total` (the matches when the call began), first with 0.
   * Not called on a dry run. What it throws is ignored, so it cannot cut the operation or its audit row short.
   */
  onProgress?: (done: number, total: number) => void;
}

export interface BulkResult {
  /** Rows acted on (or, with `dryRun`, that would be). */
  count: number;
  dryRun: boolean;
}

function bulkQuery(filter: unknown, what: string): DeadLetterListQuery {
  if (typeof filter === "object" && filter !== null && ("limit" in filter || "offset" in filter)) {
    throw invalid(
      `${what}.limit`,
      "a bulk operation takes no limit or offset; it acts on every match",
      filter,
    );
  }
  const query = deadLetterListQuery(filter as DeadLetterFilter | undefined, what);
  const startedAt = new Date();
  const until = query.until === null || query.until > startedAt ? startedAt : query.until;
  return { ...query, until, limit: BULK_CHUNK, offset: 0 };
}

function dryRunOf(options: unknown, what: string): boolean {
  const dryRun = (options as { dryRun?: unknown } | undefined)?.dryRun;
  if (dryRun !== undefined && typeof dryRun !== "boolean")
    throw invalid(`${what}.dryRun`, "expected a boolean", dryRun);
  return dryRun === true;
}

type Progress = NonNullable<BulkOptions["onProgress"]>;

function progressOf(options: unknown, what: string): Progress | null {
  const onProgress = (options as { onProgress?: unknown } | undefined)?.onProgress;
  if (onProgress !== undefined && typeof onProgress !== "function")
    fail(what, ["onProgress must be a function (done, total)"]);
  return (onProgress as Progress | undefined) ?? null;
}

/** Counts the matches, then returns the per-row tick that reports to `onProgress`. */
async function progressTicker(
  backend: Backend<unknown>,
  query: DeadLetterListQuery,
  onProgress: Progress,
): Promise<() => void> {
  const total = await walk(backend, query, null, false);
  const report = (done: number) => {
    // A progress display must not decide whether the rest is replayed or purged.
    try {
      const returned: unknown = onProgress(done, total);
      if (returned instanceof Promise) returned.catch(() => {});
    } catch {}
  };
  report(0);
  let done = 0;
  return () => report(++done);
}

/**
 * Walk every matching row, calling `act` on each id (unless dry run) and `tick` after each. `consumes` says
 * whether acting removes the row from the matches (purge), so the next page is read from the start again.
 */
async function walk(
  backend: Backend<unknown>,
  query: DeadLetterListQuery,
  act: ((id: string) => Promise<boolean>) | null,
  consumes: boolean,
  tick?: () => void,
): Promise<number> {
  let count = 0;
  let offset = 0;
  for (;;) {
    const rows = await backend.deadLetters.list({ ...query, offset });
    if (rows.length === 0) return count;
    let acted = 0;
    for (const row of rows) {
      if (act === null || (await act(row.id))) acted++;
      tick?.();
    }
    count += acted;
    if (rows.length < query.limit) return count;
    offset += consumes && act !== null ? rows.length - acted : rows.length;
  }
}

export async function bulk(
  backend: Backend<unknown>,
  kind: "replay_where" | "purge_where",
  filter: unknown,
  options: unknown,
  act: (id: string) => Promise<boolean>,
): Promise<BulkResult> {
  const what = `deadLetter.${kind === "replay_where" ? "replayWhere" : "purgeWhere"}`;
  const query = bulkQuery(filter, `${what}(filter)`);
  const actor = actorOf(options, `${what}(options)`, ["dryRun", "onProgress"]);
  const dryRun = dryRunOf(options, `${what}(options)`);
  const onProgress = progressOf(options, `${what}(options)`);
  const tick = onProgress && !dryRun ? await progressTicker(backend, query, onProgress) : undefined;
  const count = await walk(backend, query, dryRun ? null : act, kind === "purge_where", tick);
  const params = { ...(filter as Record<string, unknown> | undefined), dryRun };
  await backend.audit.record(
    auditRecord(`dead_letter.${kind}`, actor, null, params, dryRun ? "dry_run" : "ok", { count }),
  );
  return { count, dryRun };
}
