/** `soniq dead-letter list | show | replay | purge | export`. */
import type { BulkResult, DeadLetterJob, JobStep } from "@soniq/core";
import { shownRows } from "@soniq/core/ops";
import { type Command, Option } from "commander";
import { Context } from "../context.js";
import type { Io } from "../output.js";
import { jsonObject, positiveInt, since } from "../parse.js";
import { shownWithSteps, stepsOf, stepsTimeline } from "../step-views.js";
import { argsVersionText, deadLettersTable, record, stamp } from "../views.js";
import {
  type BulkFlags,
  checkRegistered,
  deadLetterNotFound,
  type FilterFlags,
  runBulk,
  toFilter,
} from "./dead-letter-bulk.js";
import { exportRows } from "./dead-letter-export.js";

function filters(command: Command, io: Io): Command {
  return command
    .option("--queue <name>", "only this queue")
    .option("--name <job>", "only this job name")
    .option("--reason <reason>", "max_retries_exceeded, permanent_failure, job_not_found, invalid_arguments")
    .option("--since <when>", "moved at or after: ISO date or a duration ago (2h, 7d)", since(io.now()))
    .option("--until <when>", "moved before: ISO date or a duration ago", since(io.now()));
}

function bulk(command: Command): Command {
  return command
    .option("--all", "every dead letter matching the filters")
    .option("--dry-run", "print how many would be affected and change nothing")
    .option("-y, --yes", "do not ask before a bulk action (required when not on a terminal)");
}

export function registerDeadLetter(program: Command, io: Io): void {
  const dl = program
    .command("dead-letter")
    .description("inspect, replay, purge and export dead-lettered jobs")
    .addHelpText(
      "after",
      "\nExamples:\n  soniq dead-letter list --since 1d\n  soniq dead-letter replay --all --name orders.email_receipt --dry-run\n" +
        "  soniq dead-letter export --output dead.jsonl",
    );
  listCommand(dl, io);
  showCommand(dl, io);
  replayCommand(dl, io);
  purgeCommand(dl, io);
  exportCommand(dl, io);
}

function listCommand(dl: Command, io: Io): void {
  filters(dl.command("list").description("dead letters, newest first"), io)
    .option("--limit <n>", "at most n rows (default 100, at most 1000)", positiveInt("--limit"))
    .addHelpText(
      "after",
      "\nJSON (--json): an array of { id, jobName, args, queue, priority, maxAttempts, attempts, lastError,\n" +
        "deadLetterReason, tags, resurrectionCount, lastResurrectionAt, originalCreatedAt, movedToDeadLetterAt }.\n\n" +
        "Examples:\n  soniq dead-letter list --reason max_retries_exceeded --since 1d\n  soniq dead-letter list --name orders.email_receipt --json",
    )
    .action(async (o: FilterFlags & { limit?: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp(async (soniq) =>
        shownRows(soniq, await soniq.deadLetters.list({ ...toFilter(o), limit: o.limit })),
      );
      if (ctx.json) return ctx.printer.json(rows);
      deadLettersTable(ctx.printer, rows);
    });
}

function showCommand(dl: Command, io: Io): void {
  dl.command("show")
    .description("one dead letter with its args, full last error and durable steps")
    .argument("<id>", "dead-letter id (the original job's id)")
    .addHelpText(
      "after",
      "\nAfter the fields, the steps the job checkpointed (kept for its replay; see soniq jobs show --help), so a\n" +
        "failed step can be resolved by name: soniq dead-letter replay <id> --resolve '{\"<step>\": value}'.\n" +
        "args version is the version of its args (the job definition's version when it was enqueued; a replay keeps it\n" +
        "and the worker upcasts), unversioned when none was stored (taken as current).\n" +
        "JSON (--json): the dead-letter object (argsVersion: a number or null) with steps: [{ name, kind, state, value,\n" +
        "error, attempt, ... }].\n\n" +
        "Examples:\n  soniq dead-letter show 0193c6e2-...",
    )
    .action(async (id: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      const shown = await ctx.withApp(async (soniq) => {
        const found = await soniq.deadLetters.get(id);
        return found && shownWithSteps(soniq.options.redact, found, await stepsOf(soniq, found.id));
      });
      if (!shown) throw deadLetterNotFound([id]);
      if (ctx.json) return ctx.printer.json({ ...shown.row, steps: shown.steps });
      showRow(ctx, shown.row, shown.steps);
    });
}

/** `replay`'s step flags. */
interface StepFlags {
  steps?: "keep" | "discard";
  resolve?: Record<string, unknown>;
}

/** The step flags as `replayWhere`'s options (only those given: core's defaults apply otherwise). */
const stepOptions = (o: StepFlags) => ({
  ...(o.steps === undefined ? {} : { steps: o.steps }),
  ...(o.resolve === undefined ? {} : { resolve: o.resolve }),
});

function replayCommand(dl: Command, io: Io): void {
  bulk(
    filters(dl.command("replay").description("replay dead letters as fresh queued jobs (the rows stay)"), io),
  )
    .argument("[id...]", "dead-letter ids")
    .option("--force", "replay names no worker has registered")
    .addOption(
      new Option(
        "--steps <mode>",
        "the dead letter's durable steps: keep (default: its done steps and unconsumed signals move to the new job, " +
          "which resumes at the step that failed) or discard (start clean)",
      ).choices(["keep", "discard"]),
    )
    .option(
      "--resolve <json>",
      'steps recorded done with these values on the new job, a JSON object { "step_name": value } ' +
        "(a failed step resolved by hand; the name as soniq dead-letter show lists it)",
      jsonObject("--resolve", '{ "step_name": value }'),
    )
    .addHelpText(
      "after",
      "\nReplays only job names some worker registered (see soniq status); --force replays anyway.\n" +
        "By ids (at most 1000) or --all, it is one replayWhere call with one audit row dead_letter.replay_where;\n" +
        "an unknown id exits 1 before anything changes. JSON (--json): { count, dryRun } (and refused: N when\n" +
        "enqueue refused rows, which stay), with --dry-run { count, dryRun: true }.\n" +
        "--steps and --resolve apply to every row replayed; a bad step name in --resolve exits 2, nothing replayed.\n\n" +
        "Examples:\n  soniq dead-letter replay 0193c6e2-...\n  soniq dead-letter replay --all --name orders.email_receipt --dry-run\n" +
        "  soniq dead-letter replay --all --reason max_retries_exceeded --since 2h --yes\n" +
        '  soniq dead-letter replay 0193c6e2-... --resolve \'{"charge_card":{"paymentId":"manual-1"}}\'\n' +
        "  soniq dead-letter replay 0193c6e2-... --steps discard",
    )
    .action(async (ids: string[], o: BulkFlags & StepFlags & { force?: boolean }, command: Command) => {
      const ctx = Context.of(command, io);
      const done = await ctx.withApp((soniq) =>
        runBulk(ctx, soniq, ids, o, {
          verb: "replay",
          check: o.force ? undefined : (names) => checkRegistered(soniq, names),
          where: (filter, options) =>
            soniq.deadLetters.replayWhere(filter, { ...options, ...stepOptions(o) }),
        }),
      );
      if (done) bulkDone(ctx, "replayed", done, o.resolve !== undefined);
    });
}

function purgeCommand(dl: Command, io: Io): void {
  bulk(filters(dl.command("purge").description("delete dead letters for good"), io))
    .argument("[id...]", "dead-letter ids")
    .addHelpText(
      "after",
      "\nBy ids (at most 1000) or --all, it is one purgeWhere call with one audit row dead_letter.purge_where;\n" +
        "an unknown id exits 1 before anything changes. JSON (--json): { count, dryRun },\n" +
        "with --dry-run { count, dryRun: true }.\n\n" +
        "Examples:\n  soniq dead-letter purge 0193c6e2-...\n  soniq dead-letter purge --all --until 30d --dry-run\n" +
        "  soniq dead-letter purge --all --queue emails --yes",
    )
    .action(async (ids: string[], o: BulkFlags, command: Command) => {
      const ctx = Context.of(command, io);
      const done = await ctx.withApp((soniq) =>
        runBulk(ctx, soniq, ids, o, {
          verb: "purge",
          where: (filter, options) => soniq.deadLetters.purgeWhere(filter, options),
        }),
      );
      if (done) bulkDone(ctx, "purged", done);
    });
}

/** Core's result (`{ count, refused?, dryRun }`) as JSON, else one line with the count. */
function bulkDone(ctx: Context, verb: "replayed" | "purged", result: BulkResult, resolving = false): void {
  if (ctx.json) {
    ctx.printer.json(result);
    return;
  }
  const why = resolving
    ? "see their args, the job's schema, and the --resolve values' size (maxStepValueBytes)"
    : "see their args and the job's schema";
  const refused = result.refused ? `; ${result.refused} left in place (enqueue refused them: ${why})` : "";
  ctx.printer.line(`${verb} ${result.count} dead-letter job(s)${refused}`);
}

function exportCommand(dl: Command, io: Io): void {
  filters(dl.command("export").description("stream matching dead letters as JSON lines or CSV"), io)
    .option("-o, --output <file>", "write to this file instead of stdout")
    .addOption(
      new Option("--format <format>", "jsonl or csv (default: from the file name, else jsonl)").choices([
        "jsonl",
        "csv",
      ]),
    )
    .addHelpText(
      "after",
      "\nJSON lines: one dead-letter object per line (dates as ISO strings). CSV: a header row, then one row\n" +
        "per dead letter (args and tags as JSON). The count goes to stderr.\n\n" +
        "Examples:\n  soniq dead-letter export --output dead.jsonl\n  soniq dead-letter export --since 7d --format csv > dead.csv",
    )
    .action(async (o: FilterFlags & { output?: string; format?: "jsonl" | "csv" }, command: Command) => {
      const ctx = Context.of(command, io);
      const format = o.format ?? (o.output?.endsWith(".csv") ? "csv" : "jsonl");
      const count = await ctx.withApp((soniq) => exportRows(soniq, o, format, o.output, io));
      io.err.write(`exported ${count} dead-letter job(s)${o.output ? ` to ${o.output}` : ""}\n`);
    });
}

function showRow(ctx: Context, row: DeadLetterJob, steps: JobStep[]): void {
  const p = ctx.printer;
  record(p, [
    ["id", row.id],
    ["name", row.jobName],
    ["queue", row.queue],
    ["reason", p.paint("red", row.deadLetterReason)],
    ["attempts", `${row.attempts} of ${row.maxAttempts}`],
    ["replays", String(row.resurrectionCount)],
    ["last replay", stamp(p, row.lastResurrectionAt)],
    ["created", stamp(p, row.originalCreatedAt)],
    ["moved", stamp(p, row.movedToDeadLetterAt)],
    ["trace", row.traceId ?? "-"],
    ["args version", argsVersionText(row.argsVersion)],
    ["args", JSON.stringify(row.args)],
    ["tags", row.tags ? JSON.stringify(row.tags) : "-"],
  ]);
  if (row.lastError) p.line(`${p.paint("dim", "last error")}\n${row.lastError}`);
  stepsTimeline(p, steps);
}
