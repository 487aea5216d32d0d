/**
 * The CLI's one error model. Every failure reaches the user as one line, `error [CODE]: what happened. What to do.`,
 * and an exit code: 1 for a failure, 2 for a usage mistake. `SoniqError`s from core keep their code; driver
 * errors (connection refused, missing database or tables) are recognised by walking the `cause` chain. What a
 * command throws while its instance is open is shown as that instance's `redact` lets an operator see it
 * (`shownFailure`).
 */
import { isSoniqError } from "@soniq/core";
import { type Redactor, shownRefusal } from "@soniq/core/ops";

export const CLI_ERROR_CODES = [
  /** A flag, argument or database URL is malformed (exit 2). */
  "SONIQ_CLI_USAGE",
  /** No job, dead letter, worker or schedule with that id or name. */
  "SONIQ_CLI_NOT_FOUND",
  /** The database server did not answer. */
  "SONIQ_CLI_CONNECTION_REFUSED",
  /** The database (Postgres) or file (SQLite) does not exist. */
  "SONIQ_CLI_DATABASE_MISSING",
  /** The database exists but Soniq's tables do not: `soniq setup` has not run. */
  "SONIQ_CLI_NOT_SET_UP",
  /** A package the command needs is not installed. */
  "SONIQ_CLI_MISSING_PACKAGE",
  /** An installed package lacks what the command needs (a @soniq/dashboard without serveDashboard()). */
  "SONIQ_CLI_UNSUPPORTED",
  /**
   * A destructive or risky action was refused (no `--yes`, no `--force`, the user said no, or `soniq mcp`
   * without a redaction rule or `--no-redact`).
   */
  "SONIQ_CLI_REFUSED",
  /** The module given to `worker`/`scheduler` could not be loaded or exports no Soniq instance. */
  "SONIQ_CLI_MODULE",
  /** A file named by `--output` cannot be written. */
  "SONIQ_CLI_OUTPUT",
] as const;

export type CliErrorCode = (typeof CLI_ERROR_CODES)[number];

export class CliError extends Error {
  readonly code: CliErrorCode;
  readonly exitCode: 1 | 2;

  constructor(code: CliErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.code = code;
    this.exitCode = code === "SONIQ_CLI_USAGE" ? 2 : 1;
  }
}

export const usage = (message: string): CliError => new CliError("SONIQ_CLI_USAGE", message);

interface Found {
  code?: string;
  message: string;
  errno?: string;
}

/** Every error in `err`'s cause chain (AggregateErrors included), outermost first. */
function chain(err: unknown): Found[] {
  const out: Found[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (depth > 6 || typeof e !== "object" || e === null) return;
    const { code, message, cause, errors } = e as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    out.push({ code: typeof code === "string" ? code : undefined, message: String(message ?? "") });
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
    visit(cause, depth + 1);
  };
  visit(err, 0);
  return out;
}

/** Turns what a database driver threw into an error that says what to do; null when it is something else. */
function fromDriver(err: unknown, target: string): CliError | null {
  const all = chain(err);
  const has = (pred: (f: Found) => boolean) => all.some(pred);
  const why = { cause: err };
  if (has((f) => f.code === "ECONNREFUSED" || f.code === "ENOTFOUND" || f.code === "EAI_AGAIN")) {
    return new CliError(
      "SONIQ_CLI_CONNECTION_REFUSED",
      `cannot connect to ${target} (connection refused). Is the database server running? Check --database-url or SONIQ_DATABASE_URL.`,
      why,
    );
  }
  if (has((f) => f.code === "3D000")) {
    return new CliError(
      "SONIQ_CLI_DATABASE_MISSING",
      `the database in ${target} does not exist. Create it (createdb <name>), then run soniq setup.`,
      why,
    );
  }
  if (has((f) => f.code === "28P01" || f.code === "28000")) {
    return new CliError(
      "SONIQ_CLI_CONNECTION_REFUSED",
      `${target} refused the credentials. Fix the user or password in --database-url.`,
      why,
    );
  }
  if (has((f) => f.code === "42P01" || /no such table|relation "soniq_\w+" does not exist/.test(f.message))) {
    return new CliError(
      "SONIQ_CLI_NOT_SET_UP",
      `Soniq's tables are missing in ${target}. Run soniq setup (with the same --database-url) first.`,
      why,
    );
  }
  if (has((f) => f.code === "SQLITE_CANTOPEN")) {
    return new CliError(
      "SONIQ_CLI_DATABASE_MISSING",
      `cannot open the SQLite file of ${target}. Check the path and that its folder exists.`,
      why,
    );
  }
  return null;
}

/**
 * What a command threw, as the app's `redact` lets an operator see it: a schema refusal
 * (`SONIQ_TASK_ARGS_INVALID`, e.g. a trigger or replay whose args the job's schema refuses) keeps its code, job
 * name and paths but not the validator's messages, which may quote the refused value (core's `shownRefusal`, as
 * the dashboard and the MCP server show it). Anything else, and everything without a `redact`, as it is.
 * `Context.withApp` passes whatever a command throws through it, with its instance's `redact`.
 */
export function shownFailure(redact: Redactor, err: unknown): unknown {
  return shownRefusal(redact, err);
}

/** Core's codes that mean the command line was wrong (exit 2, as a usage error). */
const USAGE_CODES: readonly string[] = [
  "SONIQ_INVALID_OPTIONS",
  "SONIQ_INVALID_ARGUMENT",
  "SONIQ_UNKNOWN_QUEUE",
];

/** The one line printed for `err` (without the `error` prefix), and the exit code. */
export function describeError(err: unknown, target = "the database"): { line: string; exitCode: 1 | 2 } {
  if (err instanceof CliError) return { line: `[${err.code}] ${err.message}`, exitCode: err.exitCode };
  const driver = fromDriver(err, target);
  if (driver) return { line: `[${driver.code}] ${driver.message}`, exitCode: 1 };
  if (isSoniqError(err)) {
    const exitCode = USAGE_CODES.includes(err.code) ? 2 : 1;
    return { line: `[${err.code}] ${oneLine(err.message)}`, exitCode };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { line: `[SONIQ_CLI_UNEXPECTED] ${oneLine(message)}`, exitCode: 1 };
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim();
