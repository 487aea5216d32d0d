/** `soniq jobs list | show <id> | cancel <id> | explain <id> | signal <id> <name> | upgrade <name>`. */
import {
  isSoniqError,
  type JobStatus,
  type SignalSent,
  type Soniq,
  SoniqError,
  type UpgradeResult,
} from "@soniq/core";
import { shownExplanationOf, shownRows } from "@soniq/core/ops";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError, usage } from "../errors.js";
import { type Io, Progress } from "../output.js";
import { jsonValue, positiveInt, statuses } from "../parse.js";
import { shownWithSteps, stepsOf, stepsTimeline } from "../step-views.js";
import { argsVersionText, jobsTable, progressText, record, stamp } from "../views.js";

const notFound = (id: string) =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no job with id ${id}. Is it dead-lettered? Try soniq dead-letter show ${id}.`,
  );

export function registerJobs(program: Command, io: Io): void {
  const jobs = program
    .command("jobs")
    .description("list, inspect, cancel, explain, signal and upgrade jobs")
    .addHelpText(
      "after",
      "\nExamples:\n  soniq jobs list --status queued --queue emails\n  soniq jobs explain 0193c6e2-...\n" +
        '  soniq jobs cancel 0193c6e2-...\n  soniq jobs signal 0193c6e2-... approval --payload \'{"by":"ops"}\'\n' +
        "  soniq jobs upgrade emails.send_welcome --module ./src/soniq.ts --dry-run",
    );
  listCommand(jobs, io);
  showCommand(jobs, io);
  cancelCommand(jobs, io);
  explainCommand(jobs, io);
  signalCommand(jobs, io);
  upgradeCommand(jobs, io);
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
          shownRows(
            soniq,
            await soniq.jobs.list({ status: o.status, queue: o.queue, jobName: o.name, limit: o.limit }),
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
      "\nargs version is the version of the job's args (its definition's version when it was enqueued, or the producer's\n" +
        "{ version }); unversioned when none was stored (taken as current). A worker upcasts older args before the run.\n" +
        "After the job's fields, its durable steps (ctx.step, ctx.sleep, ctx.waitForSignal) in the order they were\n" +
        "first written: kind, name, state (done, failed, waiting, timed_out), the attempt that wrote it (resolved: an\n" +
        "operator's value at replay), duration, wake time of a waiting one, and the value (or a failed step's error) on\n" +
        "one line, through redact. JSON (--json): the job object (argsVersion: a number or null) with steps: [{ name,\n" +
        "kind, state, value, error, attempt, startedAt, finishedAt, wakeAt }].\n\nExamples:\n  soniq jobs show 0193c6e2-...\n" +
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
        ["args version", argsVersionText(job.argsVersion)],
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

/** `n queued jobs`, `1 dead letter`. */
const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The line `jobs upgrade` prints for core's result, then one line per failed row it lists. */
function upgradeLines(result: UpgradeResult): string[] {
  const what =
    `${count(result.jobs, "queued job", "queued jobs")} and ${count(result.deadLetters, "dead letter", "dead letters")} ` +
    `of ${JSON.stringify(result.name)} to version ${result.version}`;
  const lines = [result.dryRun ? `Would upgrade ${what}` : `Upgraded ${what}`];
  if (result.failed === 0) return lines;
  const left = result.dryRun ? "would be" : result.failed === 1 ? "was" : "were";
  lines.push(
    `${count(result.failed, "row", "rows")} ${result.dryRun ? "would fail" : "failed"} the upcast or the schema and ` +
      `${left} left unchanged (a job dead-letters invalid_arguments when it runs):`,
  );
  for (const f of result.failures)
    lines.push(`  ${f.kind === "job" ? "job" : "dead letter"} ${f.id} (version ${f.version}): ${f.error}`);
  const more = result.failed - result.failures.length;
  if (more > 0) lines.push(`  ... and ${more} more`);
  return lines;
}

/** Core's refusal of a name the app does not define, worded for the command line (its code is kept). */
function upgradeError(err: unknown, name: string, module: string): unknown {
  if (!isSoniqError(err, "SONIQ_UNKNOWN_TASK_NAME")) return err;
  return new SoniqError(
    "SONIQ_UNKNOWN_TASK_NAME",
    `${module} defines no job named ${name}; the upgrade needs its definition (version, upcasters, schema). ` +
      "Check the name, or pass the module that defines it. Nothing was changed.",
    { context: err.context },
  );
}

/** The failures' error texts as the app's `redact` shows a job's errors (an upcaster may quote the args). */
function shownUpgrade(soniq: Soniq, result: UpgradeResult): UpgradeResult {
  const redact = soniq.options.redact;
  if (!redact.active) return result;
  return {
    ...result,
    failures: result.failures.map((f) => ({ ...f, error: redact.error(f.error, result.name) ?? "" })),
  };
}

function upgradeCommand(jobs: Command, io: Io): void {
  jobs
    .command("upgrade")
    .description(
      "rewrite a job's queued jobs and dead letters to its current args version, through its upcasters",
    )
    .argument("<name>", "the job's name, as your app's module defines it")
    .option("--dry-run", "count what would be rewritten (and what would fail) and change nothing")
    .addHelpText(
      "after",
      "\nNeeds your app's module (--module <file> or SONIQ_MODULE): the job's definition, with its version, upcasters\n" +
        "and schema, lives there; without one the command exits 2 and opens nothing. The queued jobs and dead letters\n" +
        "of <name> whose args are older than the definition's version pass its upcasters in order, then its schema, and\n" +
        "are rewritten in batches (soniq.jobs.upgrade), audited as job.upgrade. Running jobs are left to their run;\n" +
        "unversioned rows are taken as current. A row whose upcast or schema check fails is left unchanged and listed\n" +
        "(the first 20); the command then exits 1 (with --dry-run too). A name the module does not define exits 1.\n" +
        "JSON (--json): { name, version, jobs, deadLetters, failed, failures: [{ id, kind, version, error }], dryRun }.\n\n" +
        "Examples:\n  soniq jobs upgrade emails.send_welcome --module ./src/soniq.ts --dry-run\n" +
        "  SONIQ_MODULE=./src/soniq.ts soniq jobs upgrade emails.send_welcome --json",
    )
    .action(async (name: string, o: { dryRun?: boolean }, command: Command) => {
      const ctx = Context.of(command, io);
      const module = ctx.module;
      if (!module)
        throw usage(
          `soniq jobs upgrade needs your app's module: the definition of ${name} (its version and upcasters) lives ` +
            "there. Pass --module ./src/soniq.ts (the module soniq worker runs) or set SONIQ_MODULE.",
        );
      const dryRun = o.dryRun === true;
      const result = await ctx.withApp(async (soniq) => {
        const progress = new Progress(io, 0, "upgrading");
        // Core counts the rows once more for a progress total: only worth it where the bar is drawn.
        const onProgress = (done: number, total: number) => progress.set(done, total);
        const options = { dryRun, actor: ctx.actor, ...(progress.drawn && !dryRun ? { onProgress } : {}) };
        try {
          return shownUpgrade(soniq, await soniq.jobs.upgrade(name, options));
        } catch (err) {
          throw upgradeError(err, name, module);
        } finally {
          progress.end();
        }
      });
      if (ctx.json) ctx.printer.json(result);
      else for (const line of upgradeLines(result)) ctx.printer.line(line);
      if (result.failed > 0) process.exitCode = 1;
    });
}
