/**
 * Dead letters: filtered, searched, paged; and the bulk actions. A bulk action by filter is core's
 * `deadLetters.replayWhere` / `purgeWhere`; one by selected ids, or by a filter with a text search (`q`,
 * which core has no filter for), lists the matching ids in pages of 1000 and acts on them one by one (not
 * one transaction: a failure partway leaves the earlier ones done, and the answer says which failed).
 */

import type { DeadLetterFilter, DeadLetterJob, Soniq } from "@soniq/core";
import { isJobId } from "@soniq/core";
import { actorOf, type Principal } from "../auth.js";
import { badRequest, notFound } from "../errors.js";
import { type Cursor, keysetPage, type Page } from "../paging.js";
import { textMatcher } from "./jobs.js";

export const BULK_PAGE = 1000;
export const MAX_IDS = 1000;

export interface DeadLetterQuery {
  queue?: string | undefined;
  name?: string | undefined;
  reason?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  q?: string | undefined;
}

function coreFilter(query: DeadLetterQuery): DeadLetterFilter {
  return {
    ...(query.queue ? { queue: query.queue } : {}),
    ...(query.name ? { jobName: query.name } : {}),
    ...(query.reason ? { reason: query.reason } : {}),
    ...(query.since ? { since: query.since } : {}),
    ...(query.until ? { until: query.until } : {}),
  };
}

function matchesFilters(row: DeadLetterJob, query: DeadLetterQuery): boolean {
  const moved = row.movedToDeadLetterAt.getTime();
  return (
    (!query.queue || row.queue === query.queue) &&
    (!query.name || row.jobName === query.name) &&
    (!query.reason || row.deadLetterReason === query.reason) &&
    (!query.since || moved >= query.since.getTime()) &&
    (!query.until || moved < query.until.getTime())
  );
}

export async function listDeadLettersPage(
  soniq: Soniq,
  query: DeadLetterQuery & { limit: number; cursor?: Cursor | undefined },
): Promise<Page<DeadLetterJob>> {
  if (query.q && isJobId(query.q) && !query.cursor) {
    const row = await soniq.deadLetters.get(query.q);
    if (row && matchesFilters(row, query))
      return { items: [row], nextCursor: null, prevCursor: null, scanned: 1, truncated: false };
  }
  const filter = coreFilter(query);
  return keysetPage<DeadLetterJob>({
    fetch: (from, limit) =>
      soniq.deadLetters.list({
        ...filter,
        limit,
        ...(from
          ? {
              [from.direction === "older" ? "after" : "before"]: {
                movedToDeadLetterAt: from.at,
                id: from.id,
              },
            }
          : {}),
      }),
    key: (row) => ({ t: row.movedToDeadLetterAt.getTime(), id: row.id }),
    limit: query.limit,
    cursor: query.cursor,
    match: query.q ? textMatcher(query.q) : undefined,
  });
}

export async function deadLetterDetail(soniq: Soniq, id: string): Promise<DeadLetterJob> {
  const row = await soniq.deadLetters.get(id);
  if (!row) throw notFound(`No dead-letter job with id ${id}.`);
  return row;
}

export interface BulkRequest {
  filter: DeadLetterQuery;
  ids?: string[] | undefined;
  dryRun: boolean;
}

export interface BulkResult {
  action: "replay" | "purge";
  dryRun: boolean;
  /** Rows matching (dry run) or acted on. */
  count: number;
  failed: { id: string; error: string }[];
  /** "core" when core's replayWhere/purgeWhere ran it, "ids" when the dashboard paged over ids. */
  via: "core" | "ids";
}

/**
 * Every matching id, read before acting (so replays cannot shift the pages). Pages walk the
 * `moved_to_dead_letter_at` order by moving `until` to the last row's instant (keyset, so each page
 * is an index range rather than a growing OFFSET); rows at that boundary millisecond are remembered
 * so none repeats. More than a page of rows in one millisecond falls back to offsets inside it.
 */
async function matchingIds(soniq: Soniq, req: BulkRequest): Promise<string[]> {
  if (req.ids) {
    const rows = await Promise.all(req.ids.map((id) => soniq.deadLetters.get(id)));
    return rows
      .filter((r): r is DeadLetterJob => r !== null && matchesFilters(r, req.filter))
      .map((r) => r.id);
  }
  const filter = coreFilter(req.filter);
  const match = req.filter.q ? textMatcher(req.filter.q) : () => true;
  const ids = new Set<string>();
  let until = filter.until;
  for (;;) {
    const rows = await soniq.deadLetters.list({ ...filter, ...(until ? { until } : {}), limit: BULK_PAGE });
    for (const row of rows) if (match(row)) ids.add(row.id);
    const last = rows[rows.length - 1];
    if (rows.length < BULK_PAGE || !last) return [...ids];
    const t = last.movedToDeadLetterAt.getTime();
    if (rows[0]?.movedToDeadLetterAt.getTime() === t) {
      await sameInstant(soniq, filter, t, match, ids);
      until = new Date(t);
    } else {
      until = new Date(t + 1);
    }
  }
}

/** All rows moved in one millisecond, by offset (only when more than a page share it). */
async function sameInstant(
  soniq: Soniq,
  filter: DeadLetterFilter,
  t: number,
  match: (row: DeadLetterJob) => boolean,
  ids: Set<string>,
): Promise<void> {
  for (let offset = 0; ; offset += BULK_PAGE) {
    const window = { ...filter, since: new Date(t), until: new Date(t + 1), limit: BULK_PAGE, offset };
    const rows = await soniq.deadLetters.list(window);
    for (const row of rows) if (match(row)) ids.add(row.id);
    if (rows.length < BULK_PAGE) return;
  }
}

/** One replay or purge with the request's actor. True when it acted. */
export async function actOnOne(
  soniq: Soniq,
  action: "replay" | "purge",
  id: string,
  actor: { actor: string },
): Promise<boolean> {
  if (action === "replay") return (await soniq.deadLetters.replay(id, actor)) !== null;
  return soniq.deadLetters.purge(id, actor);
}

export async function bulkDeadLetters(
  soniq: Soniq,
  principal: Principal,
  action: "replay" | "purge",
  req: BulkRequest,
): Promise<BulkResult> {
  const actor = actorOf(principal);
  if (!req.ids && !req.filter.q) {
    const options = { ...actor, dryRun: req.dryRun };
    const filter = coreFilter(req.filter);
    const result =
      action === "replay"
        ? await soniq.deadLetters.replayWhere(filter, options)
        : await soniq.deadLetters.purgeWhere(filter, options);
    return { action, dryRun: req.dryRun, count: result.count, failed: [], via: "core" };
  }
  const ids = await matchingIds(soniq, req);
  if (req.dryRun) return { action, dryRun: true, count: ids.length, failed: [], via: "ids" };
  const failed: { id: string; error: string }[] = [];
  let count = 0;
  for (const id of ids) {
    try {
      if (await actOnOne(soniq, action, id, actor)) count++;
    } catch (err) {
      failed.push({ id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { action, dryRun: false, count, failed, via: "ids" };
}

export function parseBulkBody(
  body: Record<string, unknown>,
  parse: (raw: Record<string, unknown>) => DeadLetterQuery,
): BulkRequest {
  const filterRaw = body.filter ?? {};
  if (typeof filterRaw !== "object" || filterRaw === null || Array.isArray(filterRaw)) {
    throw badRequest("filter must be an object like { queue, name, reason, since, until, q }");
  }
  if (body.dryRun !== undefined && typeof body.dryRun !== "boolean")
    throw badRequest("dryRun must be a boolean");
  let ids: string[] | undefined;
  if (body.ids !== undefined) {
    if (!Array.isArray(body.ids) || body.ids.length === 0 || body.ids.length > MAX_IDS) {
      throw badRequest(`ids must be a non-empty array of at most ${MAX_IDS} dead-letter ids`);
    }
    if (!body.ids.every((id) => typeof id === "string" && /^[A-Za-z0-9_.:-]{1,200}$/.test(id))) {
      throw badRequest("ids must be dead-letter ids");
    }
    ids = [...new Set(body.ids as string[])];
  }
  if (body.all !== undefined && typeof body.all !== "boolean") throw badRequest("all must be a boolean");
  const filter = parse(filterRaw as Record<string, unknown>);
  const everything = !ids && Object.values(filter).every((v) => v === undefined);
  if (everything && body.all !== true) {
    throw badRequest(
      "This filter matches every dead letter: send the filter under `filter`, or `all: true` to act on all of them.",
    );
  }
  return { filter, ids, dryRun: body.dryRun === true };
}
