/**
 * Dead letters: filtered and searched by core (`deadLetters.list` with `q`: the id, name or last error
 * contains the text; while a `redact` is active, an id or a job name exactly: core's `searchFilter`, so a
 * search, a list or a bulk dry-run count never tells what a redacted error holds), paged by cursor; and the bulk actions. A bulk replay or purge is one call of core's
 * `deadLetters.replayWhere` / `purgeWhere`, so one `dead_letter.*_where` audit row with the count: by a filter
 * (text search included), or by the selected ids (core's `ids` filter, at most 1000). Core answers how many it
 * acted on and how many replays enqueue refused (those rows stay); a selected id that names no dead letter
 * (any more) is neither, and the answer counts it as `notFound`.
 */

import type { DeadLetterBulkFilter, DeadLetterJob, JobStep, Soniq } from "@soniq/core";
import { matchesEveryDeadLetter, searchFilter } from "@soniq/core/ops";
import { actorOf, type Principal } from "../auth.js";
import { badRequest, notFound } from "../errors.js";
import { type Cursor, keysetPage, type Page } from "../paging.js";
import { readSteps } from "./steps.js";

export interface DeadLetterQuery {
  queue?: string | undefined;
  name?: string | undefined;
  reason?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  q?: string | undefined;
}

/** Core's filter for `query` (and the selected `ids`), its search as `soniq`'s `redact` allows. */
function coreFilter(soniq: Soniq, query: DeadLetterQuery, ids?: readonly string[]): DeadLetterBulkFilter {
  const filter: DeadLetterBulkFilter = {
    ...(query.queue ? { queue: query.queue } : {}),
    ...(query.name ? { jobName: query.name } : {}),
    ...(query.reason ? { reason: query.reason } : {}),
    ...(query.since ? { since: query.since } : {}),
    ...(query.until ? { until: query.until } : {}),
    ...(ids ? { ids } : {}),
  };
  return searchFilter(filter, query.q, soniq.options.redact.active);
}

export async function listDeadLettersPage(
  soniq: Soniq,
  query: DeadLetterQuery & { limit: number; cursor?: Cursor | undefined },
): Promise<Page<DeadLetterJob>> {
  const filter = coreFilter(soniq, query);
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
  });
}

export async function deadLetterDetail(soniq: Soniq, id: string): Promise<DeadLetterJob> {
  const row = await soniq.deadLetters.get(id);
  if (!row) throw notFound(`No dead-letter job with id ${id}.`);
  return row;
}

/** A dead letter with its durable-step checkpoints (kept under its id; null when the backend keeps none). */
export async function deadLetterWithSteps(
  soniq: Soniq,
  id: string,
): Promise<{ deadLetter: DeadLetterJob; steps: JobStep[] | null }> {
  const [deadLetter, steps] = await Promise.all([deadLetterDetail(soniq, id), readSteps(soniq, id)]);
  return { deadLetter, steps };
}

export interface BulkRequest {
  filter: DeadLetterQuery;
  ids?: string[] | undefined;
  dryRun: boolean;
  /** The caller said it means every dead letter the filter matches, even when that is all of them. */
  all: boolean;
}

export interface BulkResult {
  action: "replay" | "purge";
  dryRun: boolean;
  /** Rows matching (dry run) or acted on. */
  count: number;
  /** Replays enqueue refused (args failing the job's schema, a job not defined here): those rows stay. */
  refused: number;
  /** With `ids`: the selected ids neither acted on nor refused (no such dead letter, or not matching the filter). */
  notFound?: number;
}

export async function bulkDeadLetters(
  soniq: Soniq,
  principal: Principal,
  action: "replay" | "purge",
  req: BulkRequest,
): Promise<BulkResult> {
  const options = { ...actorOf(principal), dryRun: req.dryRun };
  const filter = coreFilter(soniq, req.filter, req.ids);
  // A filter that narrows nothing (`since: 0`, a far `until`, a name every row has) is "all": it must be said.
  if (!req.ids && !req.all && !req.dryRun && (await matchesEveryDeadLetter(soniq, filter))) {
    throw badRequest(
      `This filter matches every dead letter: send all: true to ${action} all of them (or narrow the filter).`,
    );
  }
  const result =
    action === "replay"
      ? await soniq.deadLetters.replayWhere(filter, options)
      : await soniq.deadLetters.purgeWhere(filter, options);
  const refused = result.refused ?? 0;
  const answer: BulkResult = { action, dryRun: result.dryRun, count: result.count, refused };
  if (req.ids) answer.notFound = Math.max(0, req.ids.length - result.count - refused);
  return answer;
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
    // Core checks the ids themselves (UUIDs, at most 1000); a selection of none is a mistake here.
    if (
      !Array.isArray(body.ids) ||
      body.ids.length === 0 ||
      !body.ids.every((id) => typeof id === "string")
    ) {
      throw badRequest("ids must be a non-empty array of dead-letter ids");
    }
    ids = [...new Set((body.ids as string[]).map((id) => id.toLowerCase()))];
  }
  if (body.all !== undefined && typeof body.all !== "boolean") throw badRequest("all must be a boolean");
  const filter = parse(filterRaw as Record<string, unknown>);
  const everything = !ids && Object.values(filter).every((v) => v === undefined);
  if (everything && body.all !== true) {
    throw badRequest(
      "This filter matches every dead letter: send the filter under `filter`, or `all: true` to act on all of them.",
    );
  }
  return { filter, ids, dryRun: body.dryRun === true, all: body.all === true };
}
