/**
 * Replay and purge, both through core's `replayWhere` / `purgeWhere`, so either way the action is one
 * `*_where` audit row with the count:
 * - by ids: the rows are read first with one `deadLetters.list({ ids })` (an unknown id exits 1 before
 *   anything changes), then acted on with the filter `{ ids }`. At most `MAX_FILTER_IDS` (1000) ids a call.
 * - `--all`: every row matching the filters (core walks them in pages, never the whole set in memory). The
 *   window is fixed when the command starts (`until` no later than now), so the count a dry run prints or the
 *   prompt asks about is the set acted on (less any row someone else removes meanwhile).
 */
import type { BulkResult, DeadLetterBulkFilter, DeadLetterJob, Soniq } from "@soniq/core";
import { isJobId } from "@soniq/core";
import { MAX_FILTER_IDS, replayRefusal } from "@soniq/core/ops";
import type { Context } from "../context.js";
import { CliError, usage } from "../errors.js";
import { Progress } from "../output.js";

export interface FilterFlags {
  queue?: string;
  name?: string;
  reason?: string;
  since?: Date;
  until?: Date;
}

export interface BulkFlags extends FilterFlags {
  all?: boolean;
  dryRun?: boolean;
  yes?: boolean;
}

export const toFilter = (o: FilterFlags) => ({
  queue: o.queue,
  jobName: o.name,
  reason: o.reason,
  since: o.since,
  until: o.until,
});

const PAGE = 1000;

/** Calls `each` with every page of rows matching `filter`, newest first. */
export async function eachPage(
  soniq: Soniq,
  filter: DeadLetterBulkFilter,
  each: (page: DeadLetterJob[]) => void | Promise<void>,
): Promise<void> {
  for (let offset = 0; ; offset += PAGE) {
    const page = await soniq.deadLetters.list({ ...filter, limit: PAGE, offset });
    await each(page);
    if (page.length < PAGE) return;
  }
}

/** Ids and `--all` are exclusive, filters need `--all`, at most `MAX_FILTER_IDS` ids: usage errors (exit 2). */
function checkSelection(ids: string[], o: BulkFlags): void {
  const filtered = [o.queue, o.name, o.reason, o.since, o.until].some((v) => v !== undefined);
  if (o.all && ids.length > 0) throw usage("pass ids or --all with filters, not both.");
  if (!o.all && ids.length === 0) throw usage("pass one or more dead-letter ids, or --all (with filters).");
  if (!o.all && filtered)
    throw usage("--queue, --name, --reason, --since and --until select rows with --all.");
  if (ids.length > MAX_FILTER_IDS) {
    throw usage(
      `pass at most ${MAX_FILTER_IDS} dead-letter ids at a time (got ${ids.length}); split the list, or select the rows with --all and filters.`,
    );
  }
}

/** The `--all` filter, its window closed at `now`: rows moved to the dead letters later are left alone. */
function windowOf(o: FilterFlags, now: number): DeadLetterBulkFilter {
  const until = o.until !== undefined && o.until.getTime() < now ? o.until : new Date(now);
  return { ...toFilter(o), until };
}

/** How many rows match and their job names, a page at a time (only the names are kept). */
async function survey(
  soniq: Soniq,
  filter: DeadLetterBulkFilter,
): Promise<{ count: number; names: string[] }> {
  let count = 0;
  const names = new Set<string>();
  await eachPage(soniq, filter, (page) => {
    count += page.length;
    for (const row of page) names.add(row.jobName);
  });
  return { count, names: [...names] };
}

/** `--dry-run` output; true when the command should stop here. */
function dryRun(ctx: Context, o: BulkFlags, action: string, count: number): boolean {
  if (!o.dryRun) return false;
  if (ctx.json) ctx.printer.json({ count, dryRun: true } satisfies BulkResult);
  else ctx.printer.line(`would ${action} ${count} dead-letter job(s)`);
  return true;
}

/**
 * Replay only names some worker registered (core's `replayRefusal`: the CLI defines no handlers, so core
 * cannot check for it); `--force` skips this check.
 */
export async function checkRegistered(soniq: Soniq, names: string[]): Promise<void> {
  const refusal = await replayRefusal(soniq.workers, names, "pass --force");
  if (refusal) throw new CliError("SONIQ_CLI_REFUSED", refusal);
}

export const deadLetterNotFound = (ids: string[]): CliError =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no dead-letter job with id ${ids.join(", ")}. List them with soniq dead-letter list.`,
  );

export interface BulkSpec {
  verb: "replay" | "purge";
  /** Refuses before anything changes, given the job names of the rows (none: no check). */
  check?: (names: string[]) => Promise<void>;
  /** Core's bulk call over `filter` (the ids, or the `--all` filters). */
  where: (
    filter: DeadLetterBulkFilter,
    options: { actor: string; onProgress?: (done: number, total: number) => void },
  ) => Promise<BulkResult>;
}

/**
 * The order of every bulk action: the selection's usage errors, unknown ids (exit 1), `--dry-run` stops,
 * the action's own check, the confirmation for `--all`, then core's bulk call with a progress bar. Answers
 * core's result, or null after a dry run.
 */
export async function runBulk(
  ctx: Context,
  soniq: Soniq,
  ids: string[],
  o: BulkFlags,
  spec: BulkSpec,
): Promise<BulkResult | null> {
  checkSelection(ids, o);
  if (!o.all) {
    const rows = await byIds(soniq, ids);
    if (dryRun(ctx, o, spec.verb, rows.length)) return null;
    await spec.check?.(rows.map((r) => r.jobName));
    return act(ctx, spec, { ids: rows.map((r) => r.id) });
  }
  const filter = windowOf(o, ctx.io.now());
  // The count is read only where it is shown (dry run, prompt, refusal) and the names only for a check.
  const seen = o.dryRun || !o.yes || spec.check ? await survey(soniq, filter) : null;
  if (seen && dryRun(ctx, o, spec.verb, seen.count)) return null;
  if (seen) await spec.check?.(seen.names);
  await ctx.confirm(`${spec.verb} ${seen?.count ?? 0} dead-letter job(s)`, o.yes);
  return act(ctx, spec, filter);
}

/** Core's bulk call, with a progress bar where one is drawn. */
async function act(ctx: Context, spec: BulkSpec, filter: DeadLetterBulkFilter): Promise<BulkResult> {
  const progress = new Progress(ctx.io, 0, spec.verb === "replay" ? "replaying" : "purging");
  // Core counts the matches once more for a progress total: only worth it where the bar is drawn.
  const onProgress = (done: number, total: number) => progress.set(done, total);
  const result = await spec.where(
    filter,
    progress.drawn ? { actor: ctx.actor, onProgress } : { actor: ctx.actor },
  );
  progress.end();
  return result;
}

/**
 * The dead letters with these ids, read in one `deadLetters.list({ ids })`; any id that names none (or is
 * not an id at all) exits 1 before anything changes.
 */
async function byIds(soniq: Soniq, ids: string[]): Promise<DeadLetterJob[]> {
  const wanted = ids.filter(isJobId);
  const rows = wanted.length > 0 ? await soniq.deadLetters.list({ ids: wanted, limit: MAX_FILTER_IDS }) : [];
  const found = new Set(rows.map((r) => r.id.toLowerCase()));
  const missing = [...new Set(ids)].filter((id) => !found.has(id.toLowerCase()));
  if (missing.length > 0) throw deadLetterNotFound(missing);
  return rows;
}
