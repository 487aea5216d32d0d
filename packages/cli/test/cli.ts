/**
 * Runs the built `soniq` binary (dist/bin.js) as a user would: a child process with its own environment,
 * no TTY, NO_COLOR unset. The project's global setup (global-setup.ts) builds it when its sources changed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Backend, SoniqOptions } from "@soniq/core";
import { Soniq } from "@soniq/core";
import pg from "pg";

export const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
export const FIXTURE = fileURLToPath(new URL("./fixtures/app.ts", import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(BIN))
    throw new Error(
      `${BIN} is missing: the CLI project's global setup builds it (run the tests with vitest, or pnpm build first).`,
    );
}

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running `soniq` process, with its output so far. */
export interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<Result>;
}

/** The test process's environment without the variables the CLI reads, then `extra`. */
export const baseEnv = (extra: Record<string, string | undefined>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // An inherited NODE_PATH (package managers and runners may set one) would resolve packages a user's shell would not.
  for (const name of ["SONIQ_DATABASE_URL", "SONIQ_REDACT", "NO_COLOR", "FORCE_COLOR", "NODE_PATH"])
    delete env[name];
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
};

const children = new Set<ChildProcess>();

/** The leak check: every `soniq` process a test started has exited (a leftover is killed, then reported). */
export function expectNoRunningChildren(): void {
  const running = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
  for (const child of running) child.kill("SIGKILL");
  children.clear();
  if (running.length > 0)
    throw new Error(`${running.length} soniq process(es) were still running after the tests`);
}

export function start(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: baseEnv(options.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Result>((resolve) => {
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export function soniqCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<Result> {
  return start(args, options).exited;
}

/**
 * Runs the binary on a pseudo-terminal (util-linux `script`), typing `input`: how a person at a terminal
 * answers a confirmation prompt.
 */
export function soniqOnTty(
  args: string[],
  input: string,
  options: { cwd: string; env?: Record<string, string> },
): Promise<Result> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const child = spawn("script", ["-qec", quoted, "/dev/null"], {
    cwd: options.cwd,
    env: baseEnv(options.env ?? {}),
  });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(input);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** A database for one test file: a temp SQLite file, or a fresh Postgres database dropped afterwards. */
export interface TestDb {
  kind: "sqlite" | "postgres";
  url: string;
  /** A folder for the CLI's cwd and scratch files. */
  dir: string;
  /** Creates the database (Postgres) without Soniq's tables. */
  create(): Promise<void>;
  drop(): Promise<void>;
}

export const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export function sqliteDb(): TestDb {
  const dir = mkdtempSync(join(tmpdir(), "soniq-cli-"));
  return {
    kind: "sqlite",
    url: `sqlite:${join(dir, "soniq.db")}`,
    dir,
    async create() {},
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect(); // fails loudly when PostgreSQL does not answer: no silent skip
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function postgresDb(): TestDb {
  const dir = mkdtempSync(join(tmpdir(), "soniq-cli-"));
  const name = `soniq_cli_${Math.random().toString(16).slice(2, 10)}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    kind: "postgres",
    url: url.toString(),
    dir,
    create: () => admin(`CREATE DATABASE ${name}`),
    async drop() {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Soniq instance in the test process on the same database, to seed rows and check results. */
export async function openApp(
  db: TestDb,
  allowUnknownJobNames = true,
  options: Omit<SoniqOptions, "backend"> = {},
): Promise<Soniq> {
  let backend: Backend<unknown>;
  if (db.kind === "postgres") {
    const { postgresBackend } = (await import(
      "@soniq/backend-postgres"
    )) as typeof import("@soniq/backend-postgres");
    backend = postgresBackend({ connectionString: db.url });
  } else {
    const { sqliteBackend } = (await import(
      "@soniq/backend-sqlite"
    )) as typeof import("@soniq/backend-sqlite");
    backend = sqliteBackend({ filename: db.url.slice("sqlite:".length) });
  }
  return new Soniq({ backend, allowUnknownJobNames, ...options });
}

/** The JSON document a command printed. */
export function json<T = unknown>(result: Result): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}): ${result.stdout}\nstderr: ${result.stderr}`);
  }
}
