/** `soniq workers`: registered workers with their heartbeats. */
import type { Command } from "commander";
import { Context } from "../context.js";
import type { Io } from "../output.js";
import { workersTable } from "../views.js";

export function registerWorkers(program: Command, io: Io): void {
  program
    .command("workers")
    .description("registered workers: host, pid, status, queues, concurrency, last heartbeat")
    .addHelpText(
      "after",
      "\nJSON (--json): an array of { id, hostname, pid, queues, concurrency, status, lastHeartbeat,\n" +
        "startedAt, version, metadata }.\n\nExamples:\n  soniq workers\n  soniq workers --json",
    )
    .action(async (_opts, command: Command) => {
      const ctx = Context.of(command, io);
      const workers = await ctx.withApp((soniq) => soniq.backend.workers.list());
      if (ctx.json) return ctx.printer.json(workers);
      workersTable(ctx.printer, workers);
    });
}
