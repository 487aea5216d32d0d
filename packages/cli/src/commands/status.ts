/** `soniq status [--watch]`: one screen with stats, queues and lag, workers, schedules and recent dead letters. */
import { setTimeout as delay } from "node:timers/promises";
import type { Soniq } from "@soniq/core";
import { workerCounts } from "@soniq/core/ops";
import type { Command } from "commander";
import { Context } from "../context.js";
import { usage } from "../errors.js";
import type { Io } from "../output.js";
import { deadLettersTable, queuesTable, schedulesTable, workersTable } from "../views.js";

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  delay(ms, undefined, { signal }).catch(() => {});

/** The document behind the screen and `status --json`. */
async function overview(soniq: Soniq) {
  const [stats, queues, workers, schedules, replication] = await Promise.all([
    soniq.jobs.stats(),
    soniq.queues.list(),
    soniq.workers.list(),
    soniq.schedules.list(),
    soniq.replication.status(),
  ]);
  return { stats, queues, workers, schedules, replication };
}

async function screen(ctx: Context, soniq: Soniq, watching = false): Promise<void> {
  const p = ctx.printer;
  const view = await overview(soniq);
  if (ctx.json) {
    // --watch --json prints one compact document per line (JSON lines), so a reader can split them.
    p.json(view, watching);
    return;
  }
  const s = view.stats;
  p.line(
    `${p.paint("bold", "soniq status")}  ${ctx.resolveTarget().display}  ${new Date(ctx.io.now()).toISOString()}`,
  );
  const r = view.replication;
  if (r.readReplica)
    p.line(`reads from a replica, lag ${r.lagMs === null ? "unknown (not replaying)" : `${r.lagMs} ms`}`);
  p.line(
    `jobs  total ${s.total}  queued ${s.queued}  processing ${s.processing}  done ${s.done}  ` +
      `dead_letter ${s.dead_letter}  cancelled ${s.cancelled}`,
  );
  p.line();
  p.line(p.paint("bold", "Queues"));
  queuesTable(p, view.queues);
  p.line();
  // The screen shows live and stale workers; stopped ones pile up over time and are counted (soniq workers lists them).
  const shown = view.workers.filter((w) => w.state !== "stopped");
  p.line(p.paint("bold", `Workers (${workerCounts(view.workers)})`));
  if (shown.length > 0) workersTable(p, shown);
  else p.line("no live workers.");
  p.line();
  p.line(p.paint("bold", "Schedules"));
  schedulesTable(p, view.schedules);
  p.line();
  p.line(p.paint("bold", `Dead letters (${s.dead_letter})`));
  if (s.dead_letter === 0) return p.line("none.");
  const recent = await soniq.deadLetters.list({ limit: 1000 });
  const byReason = new Map<string, number>();
  for (const d of recent) byReason.set(d.deadLetterReason, (byReason.get(d.deadLetterReason) ?? 0) + 1);
  const reasons = [...byReason].map(([reason, n]) => `${reason} ${n}`).join(", ");
  p.line(`by reason${recent.length < s.dead_letter ? ` (newest ${recent.length})` : ""}: ${reasons}`);
  deadLettersTable(p, recent.slice(0, 5));
  if (s.dead_letter > 5) p.line(`... and ${s.dead_letter - 5} more: soniq dead-letter list`);
}

export function registerStatus(program: Command, io: Io): void {
  program
    .command("status")
    .description("stats, queues with lag, workers, schedules and dead letters at a glance")
    .option("--watch [seconds]", "redraw every few seconds (default 2) until Ctrl-C")
    .addHelpText(
      "after",
      "\nJSON (--json): { stats, queues, workers, schedules, replication }; stats has exactly the six keys\n" +
        "total, queued, processing, done, dead_letter, cancelled; replication is { readReplica, lagMs }\n" +
        "(SONIQ_READ_DATABASE_URL: a Postgres read replica for these reads; the lag is shown).\n\n" +
        "Examples:\n  soniq status\n  soniq status --watch 5\n  soniq status --json | jq .stats",
    )
    .action(async (opts: { watch?: string | boolean }, command: Command) => {
      const ctx = Context.of(command, io);
      if (opts.watch === undefined) return ctx.withApp((soniq) => screen(ctx, soniq));
      const seconds = opts.watch === true ? 2 : Number(opts.watch);
      if (!Number.isFinite(seconds) || seconds <= 0) throw usage("--watch takes a number of seconds > 0.");
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        await ctx.withApp(async (soniq) => {
          while (!stop.signal.aborted) {
            if (!ctx.json && io.out.isTTY) io.out.write("\u001b[2J\u001b[H");
            await screen(ctx, soniq, true);
            await sleep(seconds * 1000, stop.signal);
          }
        });
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
}
