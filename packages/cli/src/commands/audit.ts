/** `soniq audit [--limit N] [--action a] [--since when]`: operator actions, newest first. Needs soniq.audit. */
import type { Command } from "commander";
import { Context } from "../context.js";
import { type AuditEntry, requireApi } from "../features.js";
import type { Io } from "../output.js";
import { positiveInt, since } from "../parse.js";
import { auditTable } from "../views.js";

export function registerAudit(program: Command, io: Io): void {
  program
    .command("audit")
    .description("the audit log of operator actions (replay, purge, cancel, pause, ...), newest first")
    .option("--limit <n>", "at most n entries (default 50)", positiveInt("--limit"), 50)
    .option("--action <action>", "only this action, e.g. dead_letter.replay")
    .option("--since <when>", "ISO date or a duration ago (2h, 7d)", since(io.now()))
    .addHelpText(
      "after",
      "\nNeeds soniq.audit (a later @soniq/core). JSON (--json): an array of\n" +
        "{ id, at, actor, action, target, params, outcome, details }. The CLI's actor is cli:<user>@<host>.\n\n" +
        "Examples:\n  soniq audit --limit 20\n  soniq audit --action dead_letter.purge_where --since 7d --json",
    )
    .action(async (o: { limit: number; action?: string; since?: Date }, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp((soniq) =>
        requireApi<(o: { limit?: number; action?: string; since?: Date }) => Promise<AuditEntry[]>>(
          soniq,
          "audit.list",
          "soniq audit",
        )({ limit: o.limit, action: o.action, since: o.since }),
      );
      if (ctx.json) return ctx.printer.json(rows);
      auditTable(ctx.printer, rows);
    });
}
