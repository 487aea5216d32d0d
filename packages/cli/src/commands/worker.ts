/**
 * `soniq worker <module>` and `soniq scheduler <module>`: run the module's Soniq instance until SIGTERM or
 * SIGINT. The first signal stops gracefully (no new claims, running jobs finish up to the shutdown timeout,
 * then the instance closes) and exits 0; a second signal exits 1 at once (its jobs return through recovery).
 */
import type { Soniq } from "@soniq/core";
import type { Command } from "commander";
import { Context } from "../context.js";
import { parseDatabaseUrl } from "../database.js";
import { usage } from "../errors.js";
import { loadApp } from "../module-loader.js";
import { type Io, shortId } from "../output.js";
import { list, positiveInt } from "../parse.js";
import { type LogFormat, logFormat, WorkerLog } from "../worker-log.js";

/** A module's own backend wins; an explicit `--database-url` of another kind is a mistake, not a choice. */
function checkDatabase(ctx: Context, app: Soniq, specifier: string, log: WorkerLog): void {
  if (ctx.database.source !== "flag") return;
  const flagged = parseDatabaseUrl(ctx.database.url);
  if (flagged.kind !== app.backend.name) {
    throw usage(
      `--database-url names a ${flagged.kind} database, but ${specifier} builds its own ${app.backend.name} backend, which is the one used. ` +
        "Drop --database-url, or change the module.",
    );
  }
  log.event(
    "warn",
    "database",
    `using ${specifier}'s own ${app.backend.name} backend (--database-url is not used)`,
  );
}

/**
 * Signal handling, installed before anything starts so an early SIGTERM is never lost to Node's default
 * (which would kill the process mid-job). `untilStopped` waits for the first signal (or one that came
 * during start-up), stops gracefully and resolves; a second signal exits 1 at once.
 */
function watchSignals(log: WorkerLog) {
  let first: NodeJS.Signals | null = null;
  let wake: (() => void) | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      log.event(
        "error",
        "forced",
        `${signal} again: exiting now; unfinished jobs return through stale recovery`,
      );
      process.exit(1);
    }
    first = signal;
    wake?.();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // Core's timers are unref'd (a scheduler alone on SQLite holds no socket): this handle keeps the process
  // running until the signal, instead of Node exiting 13 on an event loop with nothing left in it.
  const keepAlive = setInterval(() => {}, 2 ** 30);
  const detach = () => {
    clearInterval(keepAlive);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
  return {
    detach,
    async untilStopped(describe: () => string, stop: () => Promise<void>): Promise<void> {
      if (!first) await new Promise<void>((resolve) => (wake = resolve));
      const signal = first as NodeJS.Signals;
      log.event("info", "stopping", `${signal}: ${describe()} (send ${signal} again to force)`, { signal });
      await stop();
      detach();
      log.event("info", "stopped", "stopped gracefully");
    },
  };
}

interface WorkerFlags {
  queues?: string[];
  concurrency?: number;
  schedules?: boolean;
  logFormat: LogFormat;
  shutdownTimeout?: number;
}

export function registerWorker(program: Command, io: Io): void {
  workerCommand(program, io);
  schedulerCommand(program, io);
}

function workerCommand(program: Command, io: Io): void {
  program
    .command("worker")
    .description("run workers for the jobs a module defines, until SIGTERM/SIGINT")
    .argument(
      "<module>",
      "a .js or .ts file exporting a Soniq instance (named `soniq`, or the default export)",
    )
    .option("--queues <list>", "only these queues, comma-separated (default: every queue)", list)
    .option("--concurrency <n>", "handlers running at once (default 10)", positiveInt("--concurrency"))
    .option("--schedules", "also run the scheduler (recurring jobs) inside this worker")
    .option(
      "--shutdown-timeout <ms>",
      "how long a graceful stop waits for running jobs (default 30000)",
      positiveInt("--shutdown-timeout"),
    )
    .option("--log-format <format>", "text (for people) or json (one object per line)", logFormat, "text")
    .addHelpText(
      "after",
      "\nThe module's own backend is used (a --database-url of another kind is an error). .ts modules need tsx.\n" +
        "SIGTERM or SIGINT stops gracefully and exits 0; a second signal exits 1 at once.\n\n" +
        "Examples:\n  soniq worker ./dist/jobs.js\n  soniq worker src/jobs.ts --queues emails,default --concurrency 20\n" +
        "  soniq worker src/jobs.ts --log-format json | tee worker.log",
    )
    .action(async (specifier: string, o: WorkerFlags, command: Command) => {
      const ctx = Context.of(command, io);
      const log = new WorkerLog(ctx.printer, o.logFormat);
      const app = await loadApp(specifier);
      await ctx.checkModuleRedact(app, specifier);
      checkDatabase(ctx, app, specifier, log);
      // A flag not given is undefined, which core reads as its default.
      const worker = app.worker({
        queues: o.queues,
        concurrency: o.concurrency,
        shutdownTimeoutMs: o.shutdownTimeout,
        schedules: o.schedules,
      });
      log.follow(worker, app.options.redact);
      const signals = watchSignals(log);
      try {
        await worker.start();
      } catch (err) {
        signals.detach();
        throw err;
      }
      const jobs = app.jobs.names();
      log.event(
        "info",
        "started",
        `worker ${shortId(worker.id)} (pid ${process.pid}) on ${app.backend.name}: queues ${worker.options.queues?.join(",") ?? "*"}, ` +
          `concurrency ${worker.options.concurrency}, ${jobs.length} job(s): ${jobs.join(", ") || "none"}${o.schedules ? ", schedules on" : ""}`,
        {
          workerId: worker.id,
          pid: process.pid,
          backend: app.backend.name,
          queues: worker.options.queues,
          concurrency: worker.options.concurrency,
          jobs,
          schedules: o.schedules === true,
        },
      );
      await signals.untilStopped(
        () => `finishing ${worker.running} running job(s), up to ${worker.options.shutdownTimeoutMs} ms`,
        () => app.close(),
      );
    });
}

function schedulerCommand(program: Command, io: Io): void {
  program
    .command("scheduler")
    .description("run the scheduler of recurring jobs a module declares, until SIGTERM/SIGINT")
    .argument(
      "<module>",
      "a .js or .ts file exporting a Soniq instance with soniq.schedules.declare(...) declarations",
    )
    .option(
      "--check-interval <ms>",
      "how often to check for due ticks and renew leadership (default 5000, at least 100)",
      positiveInt("--check-interval"),
    )
    .option("--log-format <format>", "text or json", logFormat, "text")
    .addHelpText(
      "after",
      "\nStores the module's schedules.declare() declarations, then fires due ticks. Several schedulers may run: one leads,\n" +
        "the others stand by. SIGTERM or SIGINT stops it (releasing leadership) and exits 0; a second signal exits 1.\n\n" +
        "Examples:\n  soniq scheduler src/schedules.ts\n  soniq scheduler dist/jobs.js --check-interval 1000",
    )
    .action(
      async (specifier: string, o: { logFormat: LogFormat; checkInterval?: number }, command: Command) => {
        const ctx = Context.of(command, io);
        const log = new WorkerLog(ctx.printer, o.logFormat);
        const app = await loadApp(specifier);
        await ctx.checkModuleRedact(app, specifier);
        checkDatabase(ctx, app, specifier, log);
        const scheduler = app.scheduler(
          o.checkInterval === undefined ? {} : { checkIntervalMs: o.checkInterval },
        );
        const signals = watchSignals(log);
        try {
          await scheduler.start();
        } catch (err) {
          signals.detach();
          throw err;
        }
        const names = (await app.schedules.list()).map((s) => s.name);
        const every = scheduler.checkIntervalMs;
        log.event(
          "info",
          "started",
          `scheduler (pid ${process.pid}) on ${app.backend.name}, checking every ${every} ms: ` +
            `${names.length} schedule(s): ${names.join(", ") || "none"}`,
          { pid: process.pid, backend: app.backend.name, checkIntervalMs: every, schedules: names },
        );
        await signals.untilStopped(
          () => "releasing leadership",
          async () => {
            await scheduler.stop();
            await app.close();
          },
        );
      },
    );
}
