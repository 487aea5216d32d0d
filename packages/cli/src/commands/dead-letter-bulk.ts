/**
 * Replay and purge: by ids, one core call per id (unknown ids exit 1 before anything changes); or `--all`,
 * every row matching the filters, through core's `replayWhere` / `purgeWhere` (pages of ids, never the whole
 * set in memory, one `*_where` audit row with the count). The `--all` window is fixed when the command starts
 * (`until` no later than now), so the count a dry run prints or the prompt asks about is the set acted on
 * (less any row someone else removes meanwhile).
 */
import type { BulkResult, DeadLetterBulkFilter, DeadLetterJob, Soniq } from "@soniq/core";
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

/** Ids and `--all` are exclusive, filters need `--all`: usage errors (exit 2). */
function checkSelection(ids: string[], o: BulkFlags): void {
  const filtered = [o.queue, o.name, o.reason, o.since, o.until].some((v) => v !== undefined);
  if (o.all && ids.length > 0) throw usage("pass ids or --all with filters, not both.");
  if (!o.all && ids.length === 0) throw usage("pass one or more dead-letter ids, or --all (with filters).");
  if (!o.all && filtered)
    throw usage("--queue, --name, --reason, --since and --until select rows with --all.");
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
 * Replay only names some worker registered (the CLI defines no handlers, so core cannot check for it);
 * `--force` skips this check.
 */
export async function checkRegistered(
  soniq: Soniq,
  names: string[],
  override = "pass --force",
): Promise<void> {
  if (names.length === 0) return;
  const known = new Set((await soniq.workers.list()).flatMap((w) => w.jobNames));
  const unknown = [...new Set(names)].filter((name) => !known.has(name)).sort();
  if (unknown.length > 0) {
    throw new CliError(
      "SONIQ_CLI_REFUSED",
      `no worker has registered ${unknown.join(", ")} (the task registry), so a replayed job would wait until one does. ` +
        `Start a worker that defines it, or ${override}. Nothing was changed.`,
    );
  }
}

export const deadLetterNotFound = (ids: string[]): CliError =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no dead-letter job with id ${ids.join(", ")}. List them with soniq dead-letter list.`,
  );

export interface BulkSpec<R> {
  verb: "replay" | "purge";
  /** Refuses before anything changes, given the job names of the rows (none: no check). */
  check?: (names: string[]) => Promise<void>;
  /** One id (the ids path). */
  one: (id: string) => Promise<R>;
  /** Every match of `filter` (the `--all` path): core's bulk call. */
  where: (
    filter: DeadLetterBulkFilter,
    options: { actor: string; onProgress?: (done: number, total: number) => void },
  ) => Promise<BulkResult>;
}

/** What a bulk action did: one result per id, or core's count for `--all`. Null after a dry run. */
export type BulkDone<R> = { ids: R[] } | { all: BulkResult } | null;

/**
 * The order of every bulk action: the selection's usage errors, unknown ids (exit 1), `--dry-run` stops,
 * the action's own check, the confirmation for `--all`, then the work with a progress bar.
 */
export async function runBulk<R>(
  ctx: Context,
  soniq: Soniq,
  ids: string[],
  o: BulkFlags,
  spec: BulkSpec<R>,
): Promise<BulkDone<R>> {
  checkSelection(ids, o);
  return o.all ? runWhere(ctx, soniq, o, spec) : runIds(ctx, await byIds(soniq, ids), o, spec);
}

async function runIds<R>(
  ctx: Context,
  rows: DeadLetterJob[],
  o: BulkFlags,
  spec: BulkSpec<R>,
): Promise<BulkDone<R>> {
  if (dryRun(ctx, o, spec.verb, rows.length)) return null;
  await spec.check?.(rows.map((r) => r.jobName));
  const progress = new Progress(ctx.io, rows.length, progressLabel(spec.verb));
  const out: R[] = [];
  for (const row of rows) {
    out.push(await spec.one(row.id));
    progress.tick();
  }
  progress.end();
  return { ids: out };
}

async function runWhere<R>(
  ctx: Context,
  soniq: Soniq,
  o: BulkFlags,
  spec: BulkSpec<R>,
): Promise<BulkDone<R>> {
  const filter = windowOf(o, ctx.io.now());
  // The count is read only where it is shown (dry run, prompt, refusal) and the names only for a check.
  const seen = o.dryRun || !o.yes || spec.check ? await survey(soniq, filter) : null;
  if (seen && dryRun(ctx, o, spec.verb, seen.count)) return null;
  if (seen) await spec.check?.(seen.names);
  await ctx.confirm(`${spec.verb} ${seen?.count ?? 0} dead-letter job(s)`, o.yes);
  const progress = new Progress(ctx.io, 0, progressLabel(spec.verb));
  // Core counts the matches once more for a progress total: only worth it where the bar is drawn.
  const onProgress = (done: number, total: number) => progress.set(done, total);
  const result = await spec.where(
    filter,
    progress.drawn ? { actor: ctx.actor, onProgress } : { actor: ctx.actor },
  );
  progress.end();
  return { all: result };
}

const progressLabel = (verb: "replay" | "purge") => (verb === "replay" ? "replaying" : "purging");

/** The dead letters with these ids, in order; any unknown id exits 1 before anything changes. */
async function byIds(soniq: Soniq, ids: string[]): Promise<DeadLetterJob[]> {
  const rows: DeadLetterJob[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    const row = await soniq.deadLetters.get(id);
    if (row) rows.push(row);
    else missing.push(id);
  }
  if (missing.length > 0) throw deadLetterNotFound(missing);
  return rows;
}
