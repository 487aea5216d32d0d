/**
 * One line for the start-up failures a first run meets (PostgreSQL down, database missing, login refused,
 * better-sqlite3 not built), saying what to do; anything else is printed in full, since it is a bug.
 */
import type { DatabaseTarget } from "./database.js";

/** Every `code` along the `cause` chain (and inside AggregateErrors: pg tries each address of a host). */
function codesOf(err: unknown, seen = new Set<unknown>()): string[] {
  if (!err || typeof err !== "object" || seen.has(err)) return [];
  seen.add(err);
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown; context?: { sqlState?: unknown } };
  const own = [e.code, e.context?.sqlState].filter((c): c is string => typeof c === "string");
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, seen)) : [];
  return [...own, ...nested, ...codesOf(e.cause, seen)];
}

/** The human line for a known start-up failure, or null when the error is not one of them. */
export function describeStartupError(err: unknown, target: DatabaseTarget): string | null {
  const codes = codesOf(err);
  if (target.kind === "postgres") {
    const url = new URL(target.location);
    const where = `${url.hostname}:${url.port || "5432"}`;
    const database = decodeURIComponent(url.pathname.slice(1)) || "(default)";
    if (codes.includes("3D000"))
      return `PostgreSQL at ${where} has no database "${database}": create it (createdb -h ${url.hostname} -U ${url.username || "postgres"} ${database}) or point SONIQ_DATABASE_URL at one that exists.`;
    if (codes.includes("ECONNREFUSED") || codes.includes("ENOTFOUND") || codes.includes("ETIMEDOUT"))
      return `PostgreSQL is not answering at ${where}: start it, or fix the host and port in SONIQ_DATABASE_URL.`;
    if (codes.includes("28P01") || codes.includes("28000"))
      return `PostgreSQL at ${where} refused the login of "${url.username}": fix the user or password in SONIQ_DATABASE_URL.`;
    return null;
  }
  const message = err instanceof Error ? err.message : "";
  if (/Could not locate the bindings file|native addon is missing|NODE_MODULE_VERSION/.test(message))
    return "better-sqlite3 is not built: run `npx -y pnpm@12.4.2 rebuild better-sqlite3` (or reinstall with its build allowed).";
  return null;
}

/** Prints the one line (or the whole error when it is unexpected) and sets exit code 1. */
export function reportStartupError(err: unknown, target: DatabaseTarget): void {
  const line = describeStartupError(err, target);
  if (line) console.error(line);
  else console.error(err);
  process.exitCode = 1;
}
