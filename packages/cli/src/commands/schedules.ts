/**
 * `soniq schedules list | show | upcoming | history | pause | resume | remove | trigger`, on core's
 * `soniq.schedules`. They act on stored schedules: a `soniq.schedules.declare()` declaration is stored when a
 * scheduler (`soniq scheduler`, `soniq worker --schedules`) starts. An unknown name exits 1.
 */
import type { Schedule, Soniq } from "@soniq/core";
import { shownSchedule } from "@soniq/core/ops";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError } from "../errors.js";
import type { Io } from "../output.js";
import { positiveInt } from "../parse.js";
import { record, schedulesTable, stamp, when } from "../views.js";

const SHAPE =
  "{ name, jobName, cron, every (ms), timezone, args, queue, priority, maxAttempts, catchUp,\npaused, nextRunAt, lastRunAt, lastJobId, createdAt }";
const STORED = "\nSchedules are stored when a scheduler starts (soniq scheduler, soniq worker --schedules).";
const missing = (name: string) =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no schedule named ${name}. List them with soniq schedules list (a declaration is stored when a scheduler starts).`,
  );

/** The keys of a schedule in `--json` output, in this order. */
export const SCHEDULE_KEYS = [
  "name",
  "jobName",
  "cron",
  "every",
  "timezone",
  "args",
  "queue",
  "priority",
  "maxAttempts",
  "catchUp",
  "paused",
  "nextRunAt",
  "lastRunAt",
  "lastJobId",
  "createdAt",
] as const satisfies readonly (keyof Schedule)[];

/** A schedule with exactly the documented keys, in that order (a missing one is null), whatever the backend's row. */
export function scheduleRow(s: Schedule): Schedule {
  const row: Record<string, unknown> = {};
  for (const key of SCHEDULE_KEYS) row[key] = s[key] ?? null;
  return row as unknown as Schedule;
}

/** The stored schedule, or the not-found error. */
async function mustGet(soniq: Soniq, name: string): Promise<Schedule> {
  const row = await soniq.schedules.get(name);
  if (!row) throw missing(name);
  return row;
}

export function registerSchedules(program: Command, io: Io): void {
  const schedules = program
    .command("schedules")
    .description("recurring jobs: list, inspect, pause, resume, trigger, remove")
    .addHelpText(
      "after",
      "\nExamples:\n  soniq schedules list\n  soniq schedules upcoming reports.daily -n 10\n  soniq schedules trigger reports.daily",
    );
  listCommand(schedules, io);
  showCommand(schedules, io);
  upcomingCommand(schedules, io);
  historyCommand(schedules, io);
  writeCommands(schedules, io);
}

function listCommand(schedules: Command, io: Io): void {
  schedules
    .command("list")
    .description("every stored schedule with its next and last fire")
    .addHelpText(
      "after",
      `${STORED}\nJSON (--json): an array of ${SHAPE}.\n\nExamples:\n  soniq schedules list\n  soniq schedules list --json | jq '.[].name'`,
    )
    .action(async (_o, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp(async (soniq) =>
        (await soniq.schedules.list()).map((row) => shownSchedule(soniq.options.redact, row)),
      );
      if (ctx.json) return ctx.printer.json(rows.map(scheduleRow));
      schedulesTable(ctx.printer, rows);
    });
}

function showCommand(schedules: Command, io: Io): void {
  schedules
    .command("show")
    .description("one schedule")
    .argument("<name>", "schedule name")
    .addHelpText(
      "after",
      `${STORED}\nJSON (--json): the schedule, ${SHAPE}.\nAn unknown name exits 1.\n\nExamples:\n  soniq schedules show reports.daily`,
    )
    .action(async (name: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      const row = await ctx.withApp(async (soniq) =>
        shownSchedule(soniq.options.redact, await mustGet(soniq, name)),
      );
      if (ctx.json) return ctx.printer.json(scheduleRow(row));
      const p = ctx.printer;
      const catchUp = typeof row.catchUp === "object" ? `within ${row.catchUp.withinMs} ms` : row.catchUp;
      record(p, [
        ["name", row.name],
        ["job", row.jobName],
        ["when", when(row)],
        ["timezone", row.timezone ?? "-"],
        ["args", JSON.stringify(row.args)],
        ["queue", row.queue ?? "(the job's)"],
        ["priority", row.priority === null ? "(the job's)" : String(row.priority)],
        ["catch up", String(catchUp)],
        ["state", p.status(row.paused ? "paused" : "active")],
        ["next", stamp(p, row.nextRunAt)],
        ["last", stamp(p, row.lastRunAt)],
        ["last job", row.lastJobId ?? "-"],
        ["created", stamp(p, row.createdAt)],
      ]);
    });
}

function upcomingCommand(schedules: Command, io: Io): void {
  schedules
    .command("upcoming")
    .description("the next fire times (DST-correct in the schedule's timezone)")
    .argument("<name>", "schedule name")
    .option("-n, --count <n>", "how many, 1 to 1000 (default 5)", positiveInt("--count"), 5)
    .addHelpText(
      "after",
      "\nJSON (--json): an array of ISO dates. An unknown name exits 1.\n\nExamples:\n  soniq schedules upcoming reports.daily -n 10",
    )
    .action(async (name: string, o: { count: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const dates = await ctx.withApp(async (soniq) => {
        await mustGet(soniq, name);
        return soniq.schedules.upcoming(name, o.count);
      });
      if (ctx.json) return ctx.printer.json(dates);
      if (dates.length === 0) return ctx.printer.line(`${name} has no future fire time.`);
      for (const d of dates) ctx.printer.line(stamp(ctx.printer, d));
    });
}

function historyCommand(schedules: Command, io: Io): void {
  schedules
    .command("history")
    .description("the tick ledger, newest first: fired, skipped, missed, deduplicated")
    .argument("<name>", "schedule name")
    .option("--limit <n>", "at most n ticks, 1 to 1000 (default 20)", positiveInt("--limit"), 20)
    .addHelpText(
      "after",
      "\nJSON (--json): an array of { tickAt, outcome, jobId, reason, recordedAt }. An unknown name exits 1.\n\n" +
        "Examples:\n  soniq schedules history reports.daily --limit 50",
    )
    .action(async (name: string, o: { limit: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const ticks = await ctx.withApp(async (soniq) => {
        await mustGet(soniq, name);
        return soniq.schedules.history(name, { limit: o.limit });
      });
      if (ctx.json) return ctx.printer.json(ticks);
      const p = ctx.printer;
      if (ticks.length === 0) return p.line(`no ticks recorded for ${name} yet.`);
      p.table(
        ["TICK", "WHEN", "OUTCOME", "JOB", "REASON"],
        ticks.map((t) => [
          t.tickAt.toISOString(),
          p.ago(t.tickAt),
          p.status(t.outcome),
          t.jobId ?? "-",
          t.reason ?? "-",
        ]),
      );
    });
}

const WRITES = [
  ["pause", "paused", "stop firing (ticks while paused are recorded skipped)"],
  ["resume", "resumed", "fire again from the next tick (ticks skipped while paused are not caught up)"],
  [
    "remove",
    "removed",
    "delete the schedule and its ledger (a declaration comes back when a scheduler starts)",
  ],
  ["trigger", "triggered", "fire once now (even while paused), recorded in the ledger; prints the job id"],
] as const;

function writeCommands(schedules: Command, io: Io): void {
  for (const [verb, done, what] of WRITES) {
    const json = verb === "trigger" ? "{ name, jobId }" : `{ name, ${done}: true }`;
    schedules
      .command(verb)
      .description(what)
      .argument("<name>", "schedule name")
      .addHelpText(
        "after",
        `\nJSON (--json): ${json}. An unknown name exits 1.\n\nExamples:\n  soniq schedules ${verb} reports.daily`,
      )
      .action(async (name: string, _o, command: Command) => {
        const ctx = Context.of(command, io);
        const result = await ctx.withApp(async (soniq) => {
          // trigger throws SONIQ_INVALID_ARGUMENT for an unknown name; check first so every verb says not found.
          if (verb === "trigger") await mustGet(soniq, name);
          return soniq.schedules[verb](name, { actor: ctx.actor });
        });
        if (result === false) throw missing(name);
        if (verb === "trigger") {
          const jobId = String(result);
          if (ctx.json) return ctx.printer.json({ name, jobId });
          return ctx.printer.line(`triggered ${name}: job ${jobId}`);
        }
        if (ctx.json) return ctx.printer.json({ name, [done]: true });
        ctx.printer.line(
          verb === "remove"
            ? `removed ${name} (and its tick history)`
            : verb === "pause"
              ? `paused ${name}: its ticks are recorded skipped until soniq schedules resume ${name}`
              : `resumed ${name}: it fires again from its next tick`,
        );
      });
  }
}
