/** `soniq workers`: registered workers with their heartbeats. */
import type { Command } from "commander";
import { Context } from "../context.js";
import type { Io } from "../output.js";
import { workersTable } from "../views.js";

export function registerWorkers(program: Command, io: Io): void {
  program
    .command("workers")
    .description(
      "registered workers: state (live, stale, stopped), host, pid, queues, concurrency, last heartbeat",
    )
    .addHelpText(
      "after",
      "\nState: live (heard from within the stale threshold, 5 min by default), stale (silent for longer;\n" +
        "a peer recovers its jobs), stopped. Live first, then stale, then stopped.\n\n" +
        "JSON (--json): an array of { id, hostname, pid, queues, concurrency, state, status, lastHeartbeat,\n" +
        "heartbeatAgeMs, jobNames, startedAt, version, metadata }.\n\nExamples:\n  soniq workers\n  soniq workers --json",
    )
    .action(async (_opts, command: Command) => {
      const ctx = Context.of(command, io);
      const workers = await ctx.withApp((soniq) => soniq.workers.list());
      if (ctx.json) return ctx.printer.json(workers);
      workersTable(ctx.printer, workers);
    });
}
