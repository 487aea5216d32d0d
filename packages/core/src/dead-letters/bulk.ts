/**
 * Bulk dead-letter operations by filter (`deadLetters.replayWhere` / `purgeWhere`). They walk the matching
 * rows in keyset pages of `BULK_CHUNK` ids (never the whole set in memory), act on each id, and write ONE
 * audit row for the whole operation with the count. The rows are fixed at the start: only rows moved to the
 * dead-letter table before the call began are touched, so rows arriving meanwhile neither shift the pages
 * nor get acted on. A dry run counts what would be touched in one `deadLetters.count` and changes nothing
 * (its audit row says so). With `onProgress`, the matches are counted first the same way so the callback can
 * say done of total.
 */

import { fail } from "../app/options.js";
import { progressReporter } from "../common/progress-report.js";
import type { DeadLetterJob } from "../common/types.js";
import type { DeadLetterListQuery, GuardedBackend } from "../contract/index.js";
import { after, type DeadLetterFilter, deadLetterListQuery, invalid } from "../jobs/queries.js";
import { type ActorOptions, actorOf, auditRecord, recordAudit } from "../observability/audit.js";

export const BULK_CHUNK = 500;

/** The filter of a bulk operation: the list filter without paging. */
export type DeadLetterBulkFilter = Omit<DeadLetterFilter, "limit" | "offset" | "after" | "before">;

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
  /**
   * Set when a replay left rows in place because enqueue would refuse their job here (args that fail the
   * job's schema, or a job not defined on an instance without `allowUnknownJobNames`): how many. Absent
   * when it refused none (and on a purge or a dry run, which reads no rows).
   */
  refused?: number;
  dryRun: boolean;
}

/** What acting on one row did: acted, found nothing to act on (`false`), or refused it. */
export type BulkAct = (row: DeadLetterJob) => Promise<boolean | "refused">;

const PAGING_KEYS = ["limit", "offset", "after", "before"];

function bulkQuery(filter: unknown, what: string): DeadLetterListQuery {
  const paging = typeof filter === "object" && filter !== null && PAGING_KEYS.filter((k) => k in filter);
  if (paging && paging.length > 0) {
    throw invalid(
      `${what}.${paging[0]}`,
      "a bulk operation takes no limit, offset, after or before; it acts on every match",
      filter,
    );
  }
  const query = deadLetterListQuery(filter as DeadLetterFilter | undefined, what);
  // `until` is exclusive and instants compare to the millisecond: rows moved in the call's own millisecond
  // (a dead letter made just before the call) are in, so the bound is the next millisecond.
  const startedAt = new Date(Date.now() + 1);
  const until = query.until === null || query.until > startedAt ? startedAt : query.until;
  return { ...query, until, limit: BULK_CHUNK, offset: 0, position: null };
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
  backend: GuardedBackend<unknown>,
  query: DeadLetterListQuery,
  onProgress: Progress,
): Promise<() => void> {
  return progressReporter(onProgress, await backend.deadLetters.count(query));
}

/**
 * Walk every matching row, calling `act` on each id and `tick` after each: keyset pages of `BULK_CHUNK`,
 * each continuing after the previous page's last row (acting may delete rows; the position still holds).
 */
async function walk(
  backend: GuardedBackend<unknown>,
  query: DeadLetterListQuery,
  act: BulkAct,
  tick?: () => void,
): Promise<{ count: number; refused: number }> {
  let count = 0;
  let refused = 0;
  let page = query;
  for (;;) {
    const rows = await backend.deadLetters.list(page);
    for (const row of rows) {
      const acted = await act(row);
      if (acted === "refused") refused++;
      else if (acted) count++;
      tick?.();
    }
    const last = rows[rows.length - 1];
    if (rows.length < query.limit || last === undefined) return { count, refused };
    page = { ...query, position: after(last, last.movedToDeadLetterAt) };
  }
}

export async function bulk(
  backend: GuardedBackend<unknown>,
  kind: "replay_where" | "purge_where",
  filter: unknown,
  options: unknown,
  act: BulkAct,
  /** More audit params (a replay's step options, already through `redact`). */
  extraParams: Record<string, unknown> = {},
): Promise<BulkResult> {
  const what = `deadLetters.${kind === "replay_where" ? "replayWhere" : "purgeWhere"}`;
  const query = bulkQuery(filter, `${what}(filter)`);
  const actor = actorOf(options, `${what}(options)`, ["dryRun", "onProgress"]);
  const dryRun = dryRunOf(options, `${what}(options)`);
  const onProgress = progressOf(options, `${what}(options)`);
  let done = { count: 0, refused: 0 };
  if (dryRun) done.count = await backend.deadLetters.count(query);
  else {
    const tick = onProgress ? await progressTicker(backend, query, onProgress) : undefined;
    done = await walk(backend, query, act, tick);
  }
  const params = { ...(filter as Record<string, unknown> | undefined), ...extraParams, dryRun };
  const counts = done.refused > 0 ? done : { count: done.count };
  await recordAudit(
    backend,
    auditRecord(`dead_letter.${kind}`, actor, null, params, dryRun ? "dry_run" : "ok", counts),
  );
  return { ...counts, dryRun };
}
