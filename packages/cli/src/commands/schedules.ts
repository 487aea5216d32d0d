/** `soniq schedules list | show | upcoming | history | pause | resume | remove | trigger`. Needs soniq.schedules. */
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError } from "../errors.js";
import { requireApi, type ScheduleInfo, type TickInfo, writeOptions } from "../features.js";
import type { Io } from "../output.js";
import { positiveInt } from "../parse.js";
import { record, schedulesTable, stamp } from "../views.js";

const NEEDS = "\nNeeds soniq.schedules (recurring jobs, a later @soniq/core).";
const missing = (name: string) =>
  new CliError("SONIQ_CLI_NOT_FOUND", `no schedule named ${name}. List them with soniq schedules list.`);

export function registerSchedules(program: Command, io: Io): void {
  const schedules = program
    .command("schedules")
    .description("recurring jobs: list, inspect, pause, resume, trigger");
  listCommand(schedules, io);
  showCommand(schedules, io);
  upcomingCommand(schedules, io);
  historyCommand(schedules, io);
  writeCommands(schedules, io);
}

function listCommand(schedules: Command, io: Io): void {
  schedules
    .command("list")
    .description("every schedule with its next and last fire")
    .addHelpText(
      "after",
      `${NEEDS}\nJSON (--json): an array of { name, jobName, cron, every, timezone, args, queue, priority, catchUp,\npaused, nextRunAt, lastRunAt, lastJobId, createdAt }.\n\nExamples:\n  soniq schedules list`,
    )
    .action(async (_o, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp((soniq) =>
        requireApi<() => Promise<ScheduleInfo[]>>(soniq, "schedules.list", "soniq schedules list")(),
      );
      if (ctx.json) return ctx.printer.json(rows);
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
      `${NEEDS}\nJSON (--json): the schedule object.\n\nExamples:\n  soniq schedules show reports.daily`,
    )
    .action(async (name: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      const row = await ctx.withApp((soniq) =>
        requireApi<(n: string) => Promise<ScheduleInfo | null>>(
          soniq,
          "schedules.get",
          "soniq schedules show",
        )(name),
      );
      if (!row) throw missing(name);
      if (ctx.json) return ctx.printer.json(row);
      const p = ctx.printer;
      record(p, [
        ["name", row.name],
        ["job", row.jobName],
        ["when", row.cron ?? `every ${String(row.every)}`],
        ["timezone", row.timezone ?? "-"],
        ["state", p.status(row.paused ? "paused" : "active")],
        ["next", stamp(p, row.nextRunAt)],
        ["last", stamp(p, row.lastRunAt)],
        ["last job", row.lastJobId ?? "-"],
      ]);
    });
}

function upcomingCommand(schedules: Command, io: Io): void {
  schedules
    .command("upcoming")
    .description("the next fire times, in the schedule's timezone")
    .argument("<name>", "schedule name")
    .option("-n, --count <n>", "how many (default 5)", positiveInt("--count"), 5)
    .addHelpText(
      "after",
      `${NEEDS}\nJSON (--json): an array of ISO dates.\n\nExamples:\n  soniq schedules upcoming reports.daily -n 10`,
    )
    .action(async (name: string, o: { count: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const dates = await ctx.withApp((soniq) =>
        requireApi<(n: string, k: number) => Promise<Date[]>>(
          soniq,
          "schedules.upcoming",
          "soniq schedules upcoming",
        )(name, o.count),
      );
      if (ctx.json) return ctx.printer.json(dates);
      for (const d of dates) ctx.printer.line(stamp(ctx.printer, d));
    });
}

function historyCommand(schedules: Command, io: Io): void {
  schedules
    .command("history")
    .description("the tick ledger, newest first: fired, skipped, missed, deduplicated")
    .argument("<name>", "schedule name")
    .option("--limit <n>", "at most n ticks (default 20)", positiveInt("--limit"), 20)
    .addHelpText(
      "after",
      `${NEEDS}\nJSON (--json): an array of { tickAt, outcome, jobId, reason, recordedAt }.\n\nExamples:\n  soniq schedules history reports.daily`,
    )
    .action(async (name: string, o: { limit: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const ticks = await ctx.withApp((soniq) =>
        requireApi<(n: string, o: { limit: number }) => Promise<TickInfo[]>>(
          soniq,
          "schedules.history",
          "soniq schedules history",
        )(name, { limit: o.limit }),
      );
      if (ctx.json) return ctx.printer.json(ticks);
      const p = ctx.printer;
      p.table(
        ["TICK", "OUTCOME", "JOB", "REASON"],
        ticks.map((t) => [t.tickAt.toISOString(), p.status(t.outcome), t.jobId ?? "-", t.reason ?? "-"]),
      );
    });
}

function writeCommands(schedules: Command, io: Io): void {
  for (const [verb, what] of [
    ["pause", "stop firing (paused ticks are recorded skipped)"],
    ["resume", "fire again (skipped ticks are not caught up)"],
    ["remove", "delete the schedule (code declarations come back when a scheduler starts)"],
    ["trigger", "fire once now, recorded in the ledger; prints the new job id"],
  ] as const) {
    schedules
      .command(verb)
      .description(what)
      .argument("<name>", "schedule name")
      .addHelpText("after", `${NEEDS}\n\nExamples:\n  soniq schedules ${verb} reports.daily`)
      .action(async (name: string, _o, command: Command) => {
        const ctx = Context.of(command, io);
        const result = await ctx.withApp(async (soniq) => {
          const fn = requireApi<(n: string, o: { actor?: string }) => Promise<unknown>>(
            soniq,
            `schedules.${verb}`,
            `soniq schedules ${verb}`,
          );
          return fn(name, writeOptions(soniq, ctx.actor));
        });
        if (result === false || result === null) throw missing(name);
        if (ctx.json) ctx.printer.json(verb === "trigger" ? { name, jobId: result } : { name, [verb]: true });
        else
          ctx.printer.line(
            verb === "trigger" ? `triggered ${name}: job ${String(result)}` : `${verb}d ${name}`,
          );
      });
  }
}
