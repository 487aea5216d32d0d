/** `soniq setup` (apply migrations) and `soniq migrate-status` (what is applied, what is pending). */
import type { Command } from "commander";
import { Context } from "../context.js";
import type { Io } from "../output.js";

export function registerSetup(program: Command, io: Io): void {
  program
    .command("setup")
    .description("create or upgrade Soniq's tables (idempotent; safe when several processes run it)")
    .addHelpText(
      "after",
      "\nExamples:\n  soniq setup\n  soniq setup --database-url postgres://postgres@127.0.0.1:5432/app",
    )
    .action(async (_opts, command: Command) => {
      const ctx = Context.of(command, io);
      const report = await ctx.withApp((soniq) => soniq.setup(), { mustExist: false });
      const where = ctx.resolveTarget().display;
      if (ctx.json) return ctx.printer.json(report);
      ctx.printer.line(
        report.appliedNow.length === 0
          ? `${where} is up to date (${report.applied.length} migration(s) applied).`
          : `applied ${report.appliedNow.length} migration(s) to ${where}: ${report.appliedNow.join(", ")}`,
      );
    });

  program
    .command("migrate-status")
    .description("list applied and pending migrations; exits 1 when some are pending")
    .addHelpText("after", "\nExamples:\n  soniq migrate-status\n  soniq migrate-status --json")
    .action(async (_opts, command: Command) => {
      const ctx = Context.of(command, io);
      const status = await ctx.withApp((soniq) => soniq.migrations.status());
      if (ctx.json) ctx.printer.json(status);
      else {
        const p = ctx.printer;
        p.line(`${ctx.resolveTarget().display}`);
        for (const name of status.applied) p.line(`  ${p.paint("green", "applied")}  ${name}`);
        for (const name of status.pending) p.line(`  ${p.paint("yellow", "pending")}  ${name}`);
        p.line(
          status.pending.length === 0
            ? "up to date."
            : `${status.pending.length} pending: run soniq setup to apply them.`,
        );
      }
      if (status.pending.length > 0) process.exitCode = 1;
    });
}
