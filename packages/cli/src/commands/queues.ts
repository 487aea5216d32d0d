/** `soniq queues list | pause <q> | resume <q> | configure <q>`, on core's `soniq.queues`. */
import type { QueueConfig } from "@soniq/core";
import type { Command } from "commander";
import { Context } from "../context.js";
import { usage } from "../errors.js";
import type { Io } from "../output.js";
import { positiveInt, rate } from "../parse.js";
import { queuesTable } from "../views.js";

export function registerQueues(program: Command, io: Io): void {
  const queues = program
    .command("queues")
    .description("queues: stats, lag, pause, resume, limits")
    .addHelpText(
      "after",
      "\nExamples:\n  soniq queues list\n  soniq queues pause emails\n  soniq queues configure emails --concurrency 5 --rate 100/1m",
    );
  listCommand(queues, io);
  controlCommands(queues, io);
  configureCommand(queues, io);
}

function listCommand(queues: Command, io: Io): void {
  queues
    .command("list")
    .description(
      "every queue with jobs, dead letters or settings: state, counts, lag of the oldest ready job, limits",
    )
    .addHelpText(
      "after",
      "\nJSON (--json): an array of { name, paused, concurrency, groupConcurrency, rateLimit, stats, lagMs }\n" +
        "(lagMs: the age of the oldest due queued job in ms, null when none is ready; a null limit is no limit).\n\n" +
        "Examples:\n  soniq queues list\n  soniq queues list --json",
    )
    .action(async (_o, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp((soniq) => soniq.queues.list());
      if (ctx.json) return ctx.printer.json(rows);
      queuesTable(ctx.printer, rows);
    });
}

const CREATE_HELP =
  "act on a queue no job, dead letter, worker or setting knows yet (set it up before its first job)";

function controlCommands(queues: Command, io: Io): void {
  for (const [verb, what] of [
    ["pause", "stop claiming from a queue (running jobs finish); durable, seen by every worker"],
    ["resume", "claim from a paused queue again"],
  ] as const) {
    queues
      .command(verb)
      .description(what)
      .argument("<queue>", "queue name")
      .option("--create", CREATE_HELP)
      .addHelpText(
        "after",
        `\nA queue no job, dead letter, worker or setting knows is refused ([SONIQ_UNKNOWN_QUEUE], exit 2) unless --create.\n` +
          `Recorded in the audit log (soniq audit). JSON (--json): { queue, ${verb === "pause" ? "paused" : "resumed"}: true }.\n\n` +
          `Examples:\n  soniq queues ${verb} emails`,
      )
      .action(async (name: string, o: { create?: boolean }, command: Command) => {
        const ctx = Context.of(command, io);
        const options = { actor: ctx.actor, ...(o.create ? { create: true } : {}) };
        await ctx.withApp((soniq) => soniq.queues[verb](name, options));
        if (ctx.json) ctx.printer.json({ queue: name, [verb === "pause" ? "paused" : "resumed"]: true });
        else ctx.printer.line(`${verb === "pause" ? "paused" : "resumed"} queue ${name}`);
      });
  }
}

function configureCommand(queues: Command, io: Io): void {
  queues
    .command("configure")
    .description(
      "set a queue's concurrency, group concurrency and rate limit (omitted flags keep their value)",
    )
    .argument("<queue>", "queue name")
    .option("--concurrency <n|off>", "jobs processing in the queue across all workers")
    .option("--group-concurrency <n|off>", "jobs processing per group within the queue")
    .option("--rate <max/window|off>", "at most max starts per window, e.g. 100/1m")
    .option("--create", CREATE_HELP)
    .addHelpText(
      "after",
      '\n"off" clears a limit. A queue nothing knows is refused unless --create. Recorded in the audit log (soniq audit). JSON (--json): { queue, ...the changed settings }.\n\n' +
        "Examples:\n  soniq queues configure emails --concurrency 5 --rate 100/1m\n  soniq queues configure emails --rate off",
    )
    .action(
      async (
        name: string,
        o: { concurrency?: string; groupConcurrency?: string; rate?: string; create?: boolean },
        command: Command,
      ) => {
        const ctx = Context.of(command, io);
        const limit = (flag: string, v: string | undefined) =>
          v === undefined ? undefined : v === "off" ? null : positiveInt(flag)(v);
        const settings: QueueConfig = {};
        const c = limit("--concurrency", o.concurrency);
        const g = limit("--group-concurrency", o.groupConcurrency);
        if (c !== undefined) settings.concurrency = c;
        if (g !== undefined) settings.groupConcurrency = g;
        if (o.rate !== undefined) settings.rateLimit = rate(o.rate);
        if (Object.keys(settings).length === 0)
          throw usage("pass --concurrency, --group-concurrency or --rate.");
        const options = { actor: ctx.actor, ...(o.create ? { create: true } : {}) };
        await ctx.withApp((soniq) => soniq.queues.configure(name, settings, options));
        if (ctx.json) ctx.printer.json({ queue: name, ...settings });
        else ctx.printer.line(`configured queue ${name}: ${JSON.stringify(settings)}`);
      },
    );
}
