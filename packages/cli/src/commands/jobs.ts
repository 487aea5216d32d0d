/** `soniq jobs list | show <id> | cancel <id> | explain <id>`. */
import type { JobStatus } from "@soniq/core";
import { shownExplanationOf } from "@soniq/core/ops";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError } from "../errors.js";
import type { Io } from "../output.js";
import { positiveInt, statuses } from "../parse.js";
import { jobsTable, progressText, record, stamp } from "../views.js";

const notFound = (id: string) =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no job with id ${id}. Is it dead-lettered? Try soniq dead-letter show ${id}.`,
  );

export function registerJobs(program: Command, io: Io): void {
  const jobs = program
    .command("jobs")
    .description("list, inspect, cancel and explain jobs")
    .addHelpText(
      "after",
      "\nExamples:\n  soniq jobs list --status queued --queue emails\n  soniq jobs explain 0193c6e2-...\n" +
        "  soniq jobs cancel 0193c6e2-...",
    );
  listCommand(jobs, io);
  showCommand(jobs, io);
  cancelCommand(jobs, io);
  explainCommand(jobs, io);
}

function listCommand(jobs: Command, io: Io): void {
  jobs
    .command("list")
    .description("jobs, newest first")
    .option("--status <list>", "queued, processing, done, cancelled (comma-separated)", statuses)
    .option("--queue <name>", "only this queue")
    .option("--name <job>", "only this job name")
    .option("--limit <n>", "at most n rows (default 100, at most 1000)", positiveInt("--limit"))
    .addHelpText(
      "after",
      "\nJSON (--json): an array of jobs { id, jobName, args, status, attempts, maxAttempts, queue, priority,\n" +
        "scheduledAt, lastError, result, dedupKey, producerId, workerId, traceId, createdAt, updatedAt, ... }.\n\n" +
        "Examples:\n  soniq jobs list --status queued,processing --queue emails\n  soniq jobs list --name orders.send_invoice --limit 20 --json",
    )
    .action(
      async (
        o: { status?: JobStatus[]; queue?: string; name?: string; limit?: number },
        command: Command,
      ) => {
        const ctx = Context.of(command, io);
        const rows = await ctx.withApp(async (soniq) =>
          (await soniq.jobs.list({ status: o.status, queue: o.queue, jobName: o.name, limit: o.limit })).map(
            (job) => soniq.options.redact.row(job),
          ),
        );
        if (ctx.json) return ctx.printer.json(rows);
        jobsTable(ctx.printer, rows);
      },
    );
}

function showCommand(jobs: Command, io: Io): void {
  jobs
    .command("show")
    .description("one job: args, result, progress, last error, attempts, timings")
    .argument("<id>", "job id")
    .addHelpText("after", "\nJSON (--json): the job object.\n\nExamples:\n  soniq jobs show 0193c6e2-...")
    .action(async (id: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      const job = await ctx.withApp(async (soniq) => {
        const found = await soniq.jobs.get(id);
        return found && soniq.options.redact.row(found);
      });
      if (!job) throw notFound(id);
      if (ctx.json) return ctx.printer.json(job);
      const p = ctx.printer;
      record(p, [
        ["id", job.id],
        ["name", job.jobName],
        ["status", p.status(job.status)],
        ["queue", job.queue],
        ["priority", String(job.priority)],
        ["attempts", `${job.attempts} of ${job.maxAttempts}`],
        ["scheduled", stamp(p, job.scheduledAt)],
        ["created", stamp(p, job.createdAt)],
        ["updated", stamp(p, job.updatedAt)],
        ["worker", job.workerId ?? "-"],
        ["producer", job.producerId ?? "-"],
        ["trace", job.traceId ?? "-"],
        ["dedup key", job.dedupKey ?? "-"],
        ["args", JSON.stringify(job.args)],
        ["result", job.result === null || job.result === undefined ? "-" : JSON.stringify(job.result)],
        ["progress", progressText(job.progress)],
      ]);
      if (job.lastError) p.line(`${p.paint("dim", "last error")}\n${job.lastError}`);
    });
}

function cancelCommand(jobs: Command, io: Io): void {
  jobs
    .command("cancel")
    .description("cancel queued or running jobs (a running job's signal aborts)")
    .argument("<id...>", "job ids")
    .addHelpText(
      "after",
      "\nExits 1 when an id names no cancellable job (missing, done or cancelled already).\n" +
        "JSON (--json): an array of { id, cancelled }.\n\nExamples:\n  soniq jobs cancel 0193c6e2-...",
    )
    .action(async (ids: string[], _o, command: Command) => {
      const ctx = Context.of(command, io);
      const results = await ctx.withApp(async (soniq) => {
        const out: { id: string; cancelled: boolean }[] = [];
        for (const id of ids) out.push({ id, cancelled: await soniq.jobs.cancel(id, { actor: ctx.actor }) });
        return out;
      });
      if (ctx.json) ctx.printer.json(results);
      else
        for (const r of results)
          ctx.printer.line(
            r.cancelled ? `cancelled ${r.id}` : `not cancelled ${r.id}: no such queued or running job`,
          );
      if (results.some((r) => !r.cancelled)) process.exitCode = 1;
    });
}

function explainCommand(jobs: Command, io: Io): void {
  jobs
    .command("explain")
    .description("why a job is (not) running: every cause that applies")
    .argument("<id>", "job or dead-letter id")
    .addHelpText(
      "after",
      "\nPrints the verdict (running, stuck, blocked, scheduled, ready, done, cancelled, dead_lettered), then one\n" +
        "line per cause: its code and what was found. The codes: scheduled_in_future, retry_backoff, queue_paused,\n" +
        "queue_concurrency_full, group_concurrency_full, rate_limited, no_worker_for_queue, no_handler_for_job,\n" +
        "held_by_stale_worker, waiting_behind, running, done, cancelled, dead_lettered; for a flow step not released\n" +
        "yet: waiting_on_parents, held_by_dead_letter. An unknown id exits 1.\n" +
        "JSON (--json): { status, verdict, reasons: [{ code, message, evidence }] }.\n\n" +
        "Examples:\n  soniq jobs explain 0193c6e2-...\n  soniq jobs explain 0193c6e2-... --json | jq '.reasons[].code'",
    )
    .action(async (id: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      // Explain's evidence quotes last errors (a held step's: its parent's): each redacted as its own row's.
      const result = await ctx.withApp((soniq) => shownExplanationOf(soniq, id));
      if (result.verdict === "not_found") {
        throw new CliError(
          "SONIQ_CLI_NOT_FOUND",
          `no job or dead letter with id ${id}. List them with soniq jobs list or soniq dead-letter list.`,
        );
      }
      if (ctx.json) return ctx.printer.json(result);
      const p = ctx.printer;
      p.line(`${id}: ${p.paint("bold", result.verdict)}${result.status ? ` (status ${result.status})` : ""}`);
      for (const r of result.reasons) p.line(`  - ${r.code}: ${r.message}`);
    });
}
