/** `soniq audit [--limit N] [--action a] [--since when]`: operator actions, newest first (`soniq.audit.list`). */
import { AUDIT_ACTIONS, type AuditAction } from "@soniq/core";
import { type Command, Option } from "commander";
import { Context } from "../context.js";
import type { Io } from "../output.js";
import { positiveInt, since } from "../parse.js";
import { auditTable } from "../views.js";

export function registerAudit(program: Command, io: Io): void {
  program
    .command("audit")
    .description("the audit log of operator actions (replay, purge, cancel, pause, ...), newest first")
    .option("--limit <n>", "at most n entries (default 50)", positiveInt("--limit"), 50)
    .addOption(new Option("--action <action>", "only this action").choices(AUDIT_ACTIONS))
    .option("--since <when>", "ISO date or a duration ago (2h, 7d)", since(io.now()))
    .addHelpText(
      "after",
      "\nJSON (--json): an array of { id, at, actor, action, target, params, outcome, details }.\n" +
        "The CLI's actor is cli:<user>@<host>.\n\n" +
        "Examples:\n  soniq audit --limit 20\n  soniq audit --action dead_letter.purge_where --since 7d --json",
    )
    .action(async (o: { limit: number; action?: AuditAction; since?: Date }, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp((soniq) =>
        soniq.audit.list({ limit: o.limit, action: o.action, since: o.since }),
      );
      if (ctx.json) return ctx.printer.json(rows);
      auditTable(ctx.printer, rows);
    });
}
