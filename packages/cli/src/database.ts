/**
 * Where the CLI's database is: `--database-url`, else `SONIQ_DATABASE_URL`, else the embedded default
 * `sqlite:./soniq.db`. Only the backend package the URL needs is imported, so a Postgres user need not
 * install better-sqlite3 (and the other way round).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Backend } from "@soniq/core";
import { CliError, usage } from "./errors.js";

export const DEFAULT_DATABASE_URL = "sqlite:./soniq.db";

export type DatabaseTarget =
  | { kind: "postgres"; url: string; display: string }
  | { kind: "sqlite"; filename: string; display: string };

/** The URL in force and where it came from (the module check needs to know whether it was explicit). */
export interface DatabaseChoice {
  url: string;
  source: "flag" | "env" | "default";
}

export function chooseDatabase(flag: string | undefined, env: NodeJS.ProcessEnv): DatabaseChoice {
  if (flag !== undefined) return { url: flag, source: "flag" };
  const fromEnv = env.SONIQ_DATABASE_URL;
  if (fromEnv !== undefined && fromEnv !== "") return { url: fromEnv, source: "env" };
  return { url: DEFAULT_DATABASE_URL, source: "default" };
}

/** `password=` and `sslpassword=` (any case), in a URL's query or a libpq `key=value` string, up to the next separator. */
const PASSWORD_PARAM = /(^|[?&\s])(\w*password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)/gi;
/** A URL's userinfo: between `://` and the last `@` (a password may hold `@`, `#`, `/` or `?` unencoded). */
const USERINFO = /^([a-z][\w+.-]*:\/\/)(.*)@/is;

/**
 * A connection string as messages show it, the password hidden wherever it is: in the userinfo (`user:***`),
 * in a `password=` / `sslpassword=` parameter, in a libpq `key=value` string, or in a URL WHATWG cannot
 * parse. Conservative: it works on the text, never on a parse that could place a password elsewhere.
 */
export function redactConnectionString(url: string): string {
  const userinfo = url.replace(USERINFO, (whole, scheme: string, info: string) => {
    const colon = info.indexOf(":");
    return colon < 0 ? whole : `${scheme}${info.slice(0, colon)}:***@`;
  });
  return userinfo.replace(PASSWORD_PARAM, (_m, before: string, key: string) => `${before}${key}***`);
}

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: "postgres", url, display: redactConnectionString(url) };
  if (url.startsWith("sqlite:")) {
    const filename = url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (filename === "") throw usage(`"${url}" names no file. Use sqlite:<path>, e.g. sqlite:./soniq.db.`);
    return { kind: "sqlite", filename, display: `sqlite:${filename}` };
  }
  throw usage(
    `unsupported database URL "${redactConnectionString(url)}". Use postgres://user@host:5432/db or sqlite:<path> (default ${DEFAULT_DATABASE_URL}).`,
  );
}

const PACKAGES = { postgres: "@soniq/backend-postgres", sqlite: "@soniq/backend-sqlite" } as const;

/** Imports a backend package by name; a missing package becomes an error that says what to install. */
async function importBackend(kind: DatabaseTarget["kind"]): Promise<Record<string, unknown>> {
  const name = PACKAGES[kind];
  try {
    return (await import(name)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" && String((err as Error).message).includes(name)) {
      throw new CliError(
        "SONIQ_CLI_MISSING_PACKAGE",
        `${kind === "postgres" ? "a postgres:// URL" : "a sqlite: URL"} needs ${name}. Install it next to @soniq/cli (npm install ${name}).`,
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * Builds the backend for `target`. `mustExist` (every command but `setup`) refuses a SQLite file that is
 * not there, instead of silently creating an empty database.
 */
export async function openBackend(
  target: DatabaseTarget,
  mustExist: boolean,
  env: NodeJS.ProcessEnv = {},
): Promise<Backend<unknown>> {
  if (target.kind === "postgres") {
    const mod = await importBackend("postgres");
    const factory = mod.postgresBackend as (
      c: { connectionString: string },
      o?: { readConnectionString?: string },
    ) => Backend<unknown>;
    // SONIQ_READ_DATABASE_URL: a read replica for status and the lists (postgresBackend's readConnectionString).
    const read = env.SONIQ_READ_DATABASE_URL;
    return factory({ connectionString: target.url }, read ? { readConnectionString: read } : undefined);
  }
  if (mustExist && target.filename !== ":memory:" && !existsSync(resolve(target.filename))) {
    throw new CliError(
      "SONIQ_CLI_DATABASE_MISSING",
      `no SQLite database at ${resolve(target.filename)}. Run soniq setup to create it, or pass --database-url.`,
    );
  }
  const mod = await importBackend("sqlite");
  const factory = mod.sqliteBackend as (t: { filename: string }) => Backend<unknown>;
  return factory({ filename: target.filename });
}
