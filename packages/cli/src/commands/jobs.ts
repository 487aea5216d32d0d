/** `soniq jobs list | show <id> | cancel <id> | explain <id> | signal <id> <name>`. */
import { isSoniqError, type JobStatus, type SignalSent, SoniqError } from "@soniq/core";
import { shownExplanationOf } from "@soniq/core/ops";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError } from "../errors.js";
import type { Io } from "../output.js";
import { jsonValue, positiveInt, statuses } from "../parse.js";
import { shownWithSteps, stepsOf, stepsTimeline } from "../step-views.js";
import { jobsTable, progressText, record, stamp } from "../views.js";

const notFound = (id: string) =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no job with id ${id}. Is it dead-lettered? Try soniq dead-letter show ${id}.`,
  );

export function registerJobs(program: Command, io: Io): void {
  const jobs = program
    .command("jobs")
    .description("list, inspect, cancel, explain and signal jobs")
    .addHelpText(
      "after",
      "\nExamples:\n  soniq jobs list --status queued --queue emails\n  soniq jobs explain 0193c6e2-...\n" +
        '  soniq jobs cancel 0193c6e2-...\n  soniq jobs signal 0193c6e2-... approval --payload \'{"by":"ops"}\'',
    );
  listCommand(jobs, io);
  showCommand(jobs, io);
  cancelCommand(jobs, io);
  explainCommand(jobs, io);
  signalCommand(jobs, io);
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
    .description("one job: args, result, progress, last error, attempts, timings, and its durable steps")
    .argument("<id>", "job id")
    .addHelpText(
      "after",
      "\nAfter the job's fields, its durable steps (ctx.step, ctx.sleep, ctx.waitForSignal) in the order they were\n" +
        "first written: kind, name, state (done, failed, waiting, timed_out), the attempt that wrote it (resolved: an\n" +
        "operator's value at replay), duration, wake time of a waiting one, and the value (or a failed step's error) on\n" +
        "one line, through redact. JSON (--json): the job object with steps: [{ name, kind, state, value, error,\n" +
        "attempt, startedAt, finishedAt, wakeAt }].\n\nExamples:\n  soniq jobs show 0193c6e2-...\n" +
        "  soniq jobs show 0193c6e2-... --json | jq '.steps[] | select(.state == \"failed\")'",
    )
    .action(async (id: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      const shown = await ctx.withApp(async (soniq) => {
        const found = await soniq.jobs.get(id);
        return found && shownWithSteps(soniq.options.redact, found, await stepsOf(soniq, found.id));
      });
      if (!shown) throw notFound(id);
      const { row: job, steps } = shown;
      if (ctx.json) return ctx.printer.json({ ...job, steps });
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
      stepsTimeline(p, steps);
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
        "yet: waiting_on_parents, held_by_dead_letter; for a job in a durable step: sleeping (ctx.sleep, until its\n" +
        "wake time), waiting_for_signal (ctx.waitForSignal: send it with soniq jobs signal); in a rolling deploy:\n" +
        "newer_version (the job's args are newer than every live worker's handler). An unknown id exits 1.\n" +
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

/** `jobs.signal`'s fields, as the command line names them. */
const SIGNAL_FLAGS: Record<string, string> = { name: "<name>", key: "--key", payload: "--payload" };

/** Core's refusals of a signal, worded for the command line; their codes are kept (scripts tell them apart). */
function signalError(err: unknown, id: string, name: string): unknown {
  if (isSoniqError(err, "SONIQ_JOB_NOT_FOUND"))
    return new SoniqError(
      "SONIQ_JOB_NOT_FOUND",
      `no job or dead letter with id ${id}; nothing was stored. List them with soniq jobs list or soniq dead-letter list.`,
      { context: err.context },
    );
  if (isSoniqError(err, "SONIQ_JOB_FINISHED")) {
    const status = typeof err.context.status === "string" ? err.context.status : "finished";
    return new SoniqError(
      "SONIQ_JOB_FINISHED",
      `job ${id} is ${status}: a done or cancelled job takes no signals; the signal ${name} was not stored.`,
      { context: err.context },
    );
  }
  if (isSoniqError(err, "SONIQ_INVALID_ARGUMENT")) {
    const field = String(err.context.field ?? "");
    const flag = field.endsWith(".actor") ? "--actor" : SIGNAL_FLAGS[field];
    if (flag === undefined) return err;
    const why = err.message.replace(/^jobs\.signal\([^)]*\)(\.actor)?:\s*/, "").replace(/([^.])$/, "$1.");
    return new SoniqError("SONIQ_INVALID_ARGUMENT", `${flag}: ${why}`, { context: err.context });
  }
  return err;
}

/** The line `jobs signal` prints for what core did. */
function signalLine(id: string, name: string, key: string | undefined, sent: SignalSent): string {
  if (sent.status === "duplicate")
    return `duplicate signal ${name} for job ${id}: the key ${key ?? ""} was sent already; nothing changed`;
  if (sent.deadLetter)
    return `stored signal ${name} for dead letter ${id}; not woken: its replay carries the signal (soniq dead-letter replay ${id})`;
  if (sent.woke)
    return `stored signal ${name} for job ${id}; woke the job: it was waiting for ${name} and is due now`;
  return `stored signal ${name} for job ${id}; not woken: the job is not waiting for ${name} now, its next wait for it takes the signal`;
}

function signalCommand(jobs: Command, io: Io): void {
  jobs
    .command("signal")
    .description("send a signal to a job (ctx.waitForSignal): stored, and a job waiting on that name wakes")
    .argument("<id>", "job id (a dead letter's id: the signal waits for its replay)")
    .argument("<name>", "the signal's name, as the job waits for it")
    .option("--payload <json>", "the payload, as JSON (default null; at most 64 KiB)", jsonValue("--payload"))
    .option("--key <key>", "an idempotency key: a resend with the same key to the same job changes nothing")
    .option("--actor <actor>", "who sent it, as the audit log records it (default cli:<user>@<host>)")
    .addHelpText(
      "after",
      "\nThe signal is stored in the job's mailbox and audited as job.signal (its name, key and size; never the payload).\n" +
        "A job waiting on that name is made due now (woke); otherwise the signal is kept for the job's next wait on\n" +
        "it. Prints stored (woke, or not) or duplicate (the key was sent already: nothing changed, exit 0).\n" +
        "Exits 1 with SONIQ_JOB_NOT_FOUND for an unknown id and SONIQ_JOB_FINISHED for a done or cancelled job\n" +
        "(nothing stored); 2 for a payload that is not JSON or is over 64 KiB, a bad name, key or actor.\n" +
        "JSON (--json): { id, name, status: stored | duplicate, woke, deadLetter }.\n\n" +
        'Examples:\n  soniq jobs signal 0193c6e2-... approval --payload \'{"by":"ops@example.com"}\' --key ticket-4711\n' +
        "  soniq jobs signal 0193c6e2-... cancel_order --actor ops@example.com --json",
    )
    .action(
      async (
        id: string,
        name: string,
        o: { payload?: unknown; key?: string; actor?: string },
        command: Command,
      ) => {
        const ctx = Context.of(command, io);
        const options = { actor: o.actor ?? ctx.actor, ...(o.key === undefined ? {} : { key: o.key }) };
        const sent = await ctx.withApp((soniq) =>
          soniq.jobs.signal(id, name, o.payload, options).catch((err: unknown) => {
            throw signalError(err, id, name);
          }),
        );
        if (ctx.json) return ctx.printer.json({ id, name, ...sent });
        ctx.printer.line(signalLine(id, name, o.key, sent));
      },
    );
}
