/**
 * Shared support for the durable-step production tests (steps-*.test.ts): child worker processes
 * (steps-child-worker.ts) with their IPC messages, the side-effect files they append to, and plain SQL on the
 * test's own database (a SQLite file or a Postgres database of postgresKind) for what the API does not show.
 */
import { type ChildProcess, fork } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { expect } from "vitest";
import { eventually } from "./runtime-support.js";

const CHILD = fileURLToPath(new URL("./steps-child-worker.ts", import.meta.url));

export type Scenario = "kill" | "hold" | "sleeper" | "waiter";

export interface ChildConfig {
  effects: string;
  startOn?: "message";
  killAt?: string;
  marker?: string;
  gate?: string;
  sleepMs?: number;
  concurrency?: number;
  staleAfterMs?: number;
}

export interface Child {
  readonly process: ChildProcess;
  readonly messages: Record<string, unknown>[];
  /** The first message `match` accepts, waited for up to `timeoutMs`. */
  next(match: (m: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  send(message: Record<string, unknown>): void;
  /** SIGKILL, and resolves once the process is gone. */
  kill(): Promise<void>;
  readonly alive: boolean;
}

/** Forks a child worker; resolves once it reported `{ ready }` (a first tsx boot on 2 cores takes seconds). */
export async function startChild(
  kind: "sqlite" | "postgres",
  target: string,
  queue: string,
  scenario: Scenario,
  config: ChildConfig,
): Promise<Child> {
  const proc = fork(CHILD, [kind, target, queue, scenario, JSON.stringify(config)], {
    execArgv: ["--conditions=source", "--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const messages: Record<string, unknown>[] = [];
  proc.on("message", (m) => messages.push(m as Record<string, unknown>));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const child: Child = {
    process: proc,
    messages,
    next: (match, timeoutMs = 15_000) =>
      eventually(() => {
        if (proc.exitCode !== null) throw new Error(`the child worker exited with ${proc.exitCode}`);
        const found = messages.find(match);
        expect(found, "the child's message").toBeDefined();
        return found as Record<string, unknown>;
      }, timeoutMs),
    send: (message) => proc.send(message),
    async kill() {
      if (child.alive) proc.kill("SIGKILL");
      await exited;
    },
    get alive() {
      return proc.exitCode === null && proc.signalCode === null;
    },
  };
  await child.next((m) => m.ready !== undefined, 60_000);
  return child;
}

/** SIGKILLs every child still alive (the tests' `finally`). */
export async function killAll(children: (Child | undefined)[]): Promise<void> {
  await Promise.all(children.map((c) => c?.kill()));
}

/** A temp directory for a test file's side-effect files, markers and gates. */
export function tempDir(): { path: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "soniq-steps-"));
  return {
    path: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface Effect {
  job: string;
  step?: string;
  attempt: number;
  pid: number;
  at: number;
  [key: string]: unknown;
}

/** The side effects appended so far (none before the first). */
export function readEffects(file: string): Effect[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Effect);
}

/** Runs one read-only query on the test's database: a SQLite file, or a Postgres URL. */
export async function sqlRows<T>(kind: "sqlite" | "postgres", target: string, text: string): Promise<T[]> {
  if (kind === "sqlite") {
    const db = new Database(target, { readonly: true });
    try {
      return db.prepare(text).all() as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Runs statements that change the test's database (creating an application table). */
export async function sqlExec(kind: "sqlite" | "postgres", target: string, text: string): Promise<void> {
  if (kind === "sqlite") {
    const db = new Database(target);
    try {
      db.pragma("busy_timeout = 5000");
      db.exec(text);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
