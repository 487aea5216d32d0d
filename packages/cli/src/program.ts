/**
 * The `soniq` program: global flags, every command, and the exit-code rule (0 ok, 1 failure, 2 usage).
 * `run(argv)` never throws and never calls `process.exit`: it prints one error line and returns the code.
 */
import { SONIQ_VERSION } from "@soniq/core/plugin";
import { Command, CommanderError } from "commander";
import { registerAudit } from "./commands/audit.js";
import { registerDashboard } from "./commands/dashboard.js";
import { registerDeadLetter } from "./commands/dead-letter.js";
import { registerFlows } from "./commands/flows.js";
import { registerJobs } from "./commands/jobs.js";
import { registerMcp } from "./commands/mcp.js";
import { registerQueues } from "./commands/queues.js";
import { registerSchedules } from "./commands/schedules.js";
import { registerSetup } from "./commands/setup.js";
import { registerStatus } from "./commands/status.js";
import { registerWebhooks } from "./commands/webhooks.js";
import { registerWorker } from "./commands/worker.js";
import { registerWorkers } from "./commands/workers.js";
import {
  chooseDatabase,
  DEFAULT_DATABASE_URL,
  parseDatabaseUrl,
  redactConnectionString,
} from "./database.js";
import { describeError } from "./errors.js";
import { type Io, processIo, terminalSafe } from "./output.js";
import { CLI_VERSION } from "./version.js";

export function createProgram(io: Io = processIo()): Command {
  const program = new Command("soniq")
    .description(
      "Soniq background jobs: set up the tables, run workers, inspect and repair jobs and dead letters.",
    )
    .version(`${CLI_VERSION} (@soniq/core ${SONIQ_VERSION})`, "-V, --version", "print the version")
    .option(
      "--database-url <url>",
      `postgres://... or sqlite:<path> (default: SONIQ_DATABASE_URL, else ${DEFAULT_DATABASE_URL})`,
    )
    .option(
      "--module <file>",
      "your app's module exporting its Soniq instance (default: SONIQ_MODULE): its backend and redact apply",
    )
    .option(
      "--redact <paths>",
      "field paths to show as [redacted], comma-separated, e.g. password,**.token (default: SONIQ_REDACT); " +
        "for the CLI's own instance (a --module app keeps its own redact)",
    )
    .option(
      "--no-redact",
      "raw values on purpose: soniq mcp refuses to serve without a redaction rule unless given",
    )
    .option("--json", "machine-readable output (read commands print one JSON document)")
    .option("--no-color", "no colour (also: NO_COLOR=1, or when stdout is not a terminal)")
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({
      writeOut: (s) => io.out.write(s),
      writeErr: (s) => io.err.write(s),
    })
    .exitOverride()
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      "\nExit codes: 0 ok, 1 failure (also: an unknown id, a refused action), 2 usage.\n\n" +
        "Redaction: --module applies your app's redact; without one, --redact / SONIQ_REDACT paths apply. soniq mcp\n" +
        "and soniq dashboard print the rule in force on stderr at start.\n\n" +
        "Examples:\n  soniq setup\n  soniq worker ./src/jobs.ts --concurrency 20\n  soniq status --watch\n" +
        "  soniq dead-letter replay --all --name emails.send_welcome --dry-run",
    );
  registerSetup(program, io);
  registerWorker(program, io);
  registerStatus(program, io);
  registerWorkers(program, io);
  registerJobs(program, io);
  registerDeadLetter(program, io);
  registerFlows(program, io);
  registerQueues(program, io);
  registerSchedules(program, io);
  registerWebhooks(program, io);
  registerAudit(program, io);
  registerDashboard(program, io);
  registerMcp(program, io);
  return program;
}

/** The database named in an error line, if the command got that far: the URL given, and how it is shown. */
function targetOf(argv: string[], io: Io): { url: string; display: string } {
  const i = argv.indexOf("--database-url");
  const inline = argv.find((a) => a.startsWith("--database-url="))?.slice("--database-url=".length);
  const { url } = chooseDatabase(i >= 0 ? argv[i + 1] : inline, io.env);
  try {
    return { url, display: parseDatabaseUrl(url).display };
  } catch {
    return { url, display: redactConnectionString(url) };
  }
}

/**
 * The error line as printed: the database URL and SONIQ_READ_DATABASE_URL never verbatim (a driver's message
 * may quote one), no control characters (a stored error's text may carry them), on one line.
 */
function errorLine(line: string, target: { url: string; display: string }, io: Io): string {
  const read = io.env.SONIQ_READ_DATABASE_URL;
  let named = target.url !== "" ? line.split(target.url).join(target.display) : line;
  if (read) named = named.split(read).join(redactConnectionString(read));
  return terminalSafe(named, { newlines: false });
}

/** Runs the CLI on `argv` (without node and the script) and returns the exit code. */
export async function run(argv: string[], io: Io = processIo()): Promise<number> {
  const program = createProgram(io);
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return 0;
      return 2;
    }
    const target = targetOf(argv, io);
    const { line, exitCode } = describeError(err, target?.display);
    io.err.write(`error ${errorLine(line, target, io)}\n`);
    return exitCode;
  }
}
