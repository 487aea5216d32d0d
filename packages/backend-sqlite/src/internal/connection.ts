/**
 * Opening and configuring the connection. The backend owns (and closes) a Database it opened from a
 * filename; a Database it was handed stays open and belongs to the caller.
 */
import { createRequire } from "node:module";
import { SoniqError } from "@soniq/core/backend";
import Database from "better-sqlite3";
import type { SqliteDatabase } from "./context.js";

export interface PragmaOptions {
  busyTimeoutMs: number;
}

/**
 * - journal_mode=WAL: readers never block the writer and vice versa; several processes share the file.
 * - synchronous=NORMAL: in WAL mode a commit no longer waits for fsync (only checkpoints do). The
 *   database cannot be corrupted by a crash; a power loss may roll back the last commits. FULL would
 *   cost an fsync per commit, which is what makes per-job state changes slow.
 * - busy_timeout: how long a statement waits for another connection's write lock before SQLITE_BUSY.
 *   Claims take the write lock (BEGIN IMMEDIATE), so competing workers queue here instead of failing.
 * - foreign_keys=ON: SQLite leaves it off per connection; soniq_jobs.worker_id relies on it.
 */
export function configureConnection(db: SqliteDatabase, options: PragmaOptions): void {
  db.pragma(`busy_timeout = ${Math.round(options.busyTimeoutMs)}`);
  db.pragma("foreign_keys = ON");
  if (!db.memory) db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
}

export function openDatabase(filename: string, options: PragmaOptions): SqliteDatabase {
  const mismatch = driverRuntimeError(filename, driverVersion(), process.versions.node);
  if (mismatch) throw mismatch;
  let db: SqliteDatabase;
  try {
    db = new Database(filename, { timeout: options.busyTimeoutMs });
  } catch (err) {
    throw openError(filename, err);
  }
  try {
    configureConnection(db, options);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * better-sqlite3 loads its compiled addon when the first Database is constructed, so a package manager
 * that skipped its build (pnpm blocks dependency builds until approved) surfaces here, not at import.
 * That is a setup problem, not a file problem: say how to get the addon built.
 */
export function openError(filename: string, err: unknown): SoniqError {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const missingBinding =
    message.includes("Could not locate the bindings file") ||
    code === "ERR_DLOPEN_FAILED" ||
    message.includes("NODE_MODULE_VERSION");
  if (missingBinding) {
    return new SoniqError(
      "SONIQ_BACKEND_ERROR",
      `Cannot open the SQLite database "${filename}": better-sqlite3's native addon is missing or was built ` +
        "for another Node.js version, because its install script did not run. Let it build, then reinstall: " +
        "with pnpm, approve it (`pnpm approve-builds`, or `allowBuilds: { better-sqlite3: true }` in " +
        "pnpm-workspace.yaml; pnpm 10: `onlyBuiltDependencies: [better-sqlite3]`) and run `pnpm install`; " +
        "with npm, run `npm rebuild better-sqlite3`. " +
        `(better-sqlite3 said: ${message.split("\n")[0]})`,
      { context: { filename, reason: "native_binding_missing" }, cause: err },
    );
  }
  return new SoniqError(
    "SONIQ_BACKEND_ERROR",
    `Cannot open the SQLite database "${filename}": ${message}. Check that its directory exists and is writable.`,
    { context: { filename }, cause: err },
  );
}

let installedDriver: string | undefined;
function driverVersion(): string {
  installedDriver ??= (createRequire(import.meta.url)("better-sqlite3/package.json") as { version: string })
    .version;
  return installedDriver;
}

/**
 * better-sqlite3 13 needs Node 22 or newer (its `engines`), and on Node 20 its prebuilt addon crashes the
 * process (a segmentation fault) at the first `new Database`: no error an application could catch. npm
 * honours `engines` and installs 12 on Node 20 from this package's `^12 || ^13`; pnpm and yarn pick the newest,
 * 13. Refuse before the crash and say which version to install.
 */
export function driverRuntimeError(filename: string, driver: string, node: string): SoniqError | undefined {
  const major = (version: string) => Number.parseInt(version.replace(/^v/, ""), 10);
  if (major(driver) < 13 || major(node) >= 22) return undefined;
  return new SoniqError(
    "SONIQ_BACKEND_ERROR",
    `Cannot open the SQLite database "${filename}": better-sqlite3 ${driver} needs Node.js 22 or newer, and this ` +
      `is Node.js ${node}, where it crashes the process. On Node.js 20 install better-sqlite3 12 in your app ` +
      "(`pnpm add better-sqlite3@^12`, `npm install better-sqlite3@^12`, `yarn add better-sqlite3@^12`; pnpm " +
      "must be allowed to build it), or move to Node.js 22 or newer (Node.js 20 reached its end of life in April 2026).",
    { context: { filename, reason: "driver_needs_newer_node", driver, node } },
  );
}
