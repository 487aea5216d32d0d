/**
 * Selecting dead letters for replay and purge: by ids, or every row matching a filter (`--all`). Rows are
 * collected before anything changes, so purging while paging cannot skip rows.
 */
import type { DeadLetterJob, Soniq } from "@soniq/core";
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

/** Calls `each` with every page of matching rows, newest first. */
export async function eachPage(
  soniq: Soniq,
  o: FilterFlags,
  each: (page: DeadLetterJob[]) => void | Promise<void>,
): Promise<void> {
  for (let offset = 0; ; offset += PAGE) {
    const page = await soniq.deadLetter.list({ ...toFilter(o), limit: PAGE, offset });
    await each(page);
    if (page.length < PAGE) return;
  }
}

export async function matching(soniq: Soniq, o: FilterFlags): Promise<DeadLetterJob[]> {
  const rows: DeadLetterJob[] = [];
  await eachPage(soniq, o, (page) => {
    rows.push(...page);
  });
  return rows;
}

/** The rows to act on, or an error: ids and `--all` are exclusive, filters need `--all`, unknown ids exit 1. */
async function select(
  soniq: Soniq,
  ids: string[],
  o: BulkFlags,
): Promise<{ rows: DeadLetterJob[]; missing: string[] }> {
  const filtered = [o.queue, o.name, o.reason, o.since, o.until].some((v) => v !== undefined);
  if (o.all && ids.length > 0) throw usage("pass ids or --all with filters, not both.");
  if (!o.all && ids.length === 0) throw usage("pass one or more dead-letter ids, or --all (with filters).");
  if (!o.all && filtered)
    throw usage("--queue, --name, --reason, --since and --until select rows with --all.");
  if (o.all) return { rows: await matching(soniq, o), missing: [] };
  const rows: DeadLetterJob[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    const row = await soniq.deadLetter.get(id);
    if (row) rows.push(row);
    else missing.push(id);
  }
  return { rows, missing };
}

/** `--dry-run` output; true when the command should stop here. */
function dryRun(ctx: Context, o: BulkFlags, action: string, count: number): boolean {
  if (!o.dryRun) return false;
  if (ctx.json) ctx.printer.json({ count });
  else ctx.printer.line(`would ${action} ${count} dead-letter job(s)`);
  return true;
}

/**
 * Replay only names some worker registered (the CLI defines no handlers, so core cannot check for it);
 * `--force` replays anyway.
 */
export async function checkRegistered(soniq: Soniq, rows: DeadLetterJob[], force: boolean | undefined) {
  if (force || rows.length === 0) return;
  const known = new Set((await soniq.backend.workers.listTaskNames()).map((t) => t.taskName));
  const unknown = [...new Set(rows.map((r) => r.jobName))].filter((name) => !known.has(name)).sort();
  if (unknown.length > 0) {
    throw new CliError(
      "SONIQ_CLI_REFUSED",
      `no worker has registered ${unknown.join(", ")} (the task registry), so a replayed job would wait until one does. ` +
        "Start a worker that defines it, or pass --force. Nothing was changed.",
    );
  }
}

export const deadLetterNotFound = (ids: string[]): CliError =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no dead-letter job with id ${ids.join(", ")}. List them with soniq dead-letter list.`,
  );

/**
 * The order of every bulk action: select (unknown ids exit 1), `--dry-run` stops, the action's own check,
 * the confirmation for `--all`, then one call per row with a progress bar. Null after a dry run.
 */
export async function runBulk<R>(
  ctx: Context,
  soniq: Soniq,
  ids: string[],
  o: BulkFlags,
  spec: {
    verb: "replay" | "purge";
    check?: (rows: DeadLetterJob[]) => Promise<void>;
    act: (row: DeadLetterJob) => Promise<R>;
  },
): Promise<R[] | null> {
  const { rows, missing } = await select(soniq, ids, o);
  if (missing.length > 0) throw deadLetterNotFound(missing);
  if (dryRun(ctx, o, spec.verb, rows.length)) return null;
  await spec.check?.(rows);
  if (o.all) await ctx.confirm(`${spec.verb} ${rows.length} dead-letter job(s)`, o.yes);
  const progress = new Progress(ctx.io, rows.length, spec.verb === "replay" ? "replaying" : "purging");
  const out: R[] = [];
  for (const row of rows) {
    out.push(await spec.act(row));
    progress.tick();
  }
  progress.end();
  return out;
}
