import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { WorkerRegistration } from "@soniq/core/backend";
import { type SqliteBackend, type SqliteBackendOptions, sqliteBackend } from "../src/index.js";

/** A fresh directory per test file; `file()` names a new database file in it. */
export function tempDir(prefix = "soniq-sqlite-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    file: (name: string = randomUUID()) => join(dir, `${name}.db`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A backend on `file` with the schema applied. */
export async function migrated(file: string, options: SqliteBackendOptions = {}): Promise<SqliteBackend> {
  const backend = sqliteBackend({ filename: file }, options);
  await backend.migrations.apply();
  return backend;
}

export function worker(id: string, overrides: Partial<WorkerRegistration> = {}): WorkerRegistration {
  return {
    id,
    hostname: "h",
    pid: 1,
    queues: [],
    concurrency: 1,
    version: null,
    metadata: null,
    ...overrides,
  };
}

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));

export interface Child {
  pid: number;
  /** Resolves with the exit code (or signal) and everything printed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  /** Resolves when the child printed a line that contains `text`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
  /** Writes a line to the child's stdin. */
  send(line: string): void;
}

/** Runs `test/fixtures/<name>.ts` in its own Node process (tsx, workspace sources). */
export function runFixture(name: string, args: string[], timeoutMs = 60_000): Child {
  const child = spawn(
    process.execPath,
    ["--conditions=source", "--import", "tsx", join(fixtures, `${name}.ts`), ...args],
    { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const w of [...waiters]) {
      if (stdout.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  timer.unref();
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    pid: child.pid ?? -1,
    exited,
    waitFor: (text, waitMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        if (stdout.includes(text)) return resolve();
        const t = setTimeout(
          () => reject(new Error(`child never printed "${text}"; stdout: ${stdout} stderr: ${stderr}`)),
          waitMs,
        );
        t.unref();
        waiters.push({
          text,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
        void exited.then(() => {
          clearTimeout(t);
          if (!stdout.includes(text)) reject(new Error(`child exited before "${text}": ${stderr}`));
        });
      }),
    kill: (signal = "SIGKILL") => child.kill(signal),
    send: (line) => {
      child.stdin.write(`${line}\n`);
    },
  };
}
