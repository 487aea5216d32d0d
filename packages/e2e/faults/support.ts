/** Fault-suite support: sizes (short or full), child workers, the run log, and the figures table. */
import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Soniq } from "@soniq/core";
import { expect } from "vitest";

export { eventually, postgresKind, sqliteKind, uniqueName } from "../test/runtime-support.js";

export const SHORT = process.env.FAULTS_SHORT === "1";
/** `full` normally, `short` with --short / FAULTS_SHORT=1. */
export const size = (full: number, short: number): number => (SHORT ? short : full);

const CHILD = fileURLToPath(new URL("./child-worker.ts", import.meta.url));

export interface Child {
  proc: ChildProcess;
  workerId: Promise<string>;
  started: string[];
}

export function spawnWorker(
  kind: string,
  target: string,
  queue: string,
  log: string,
  mode: "work" | "hold",
  env: Record<string, string> = {},
): Child {
  const proc = fork(CHILD, [kind, target, queue, log, mode], {
    execArgv: ["--conditions=source", "--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...env },
  });
  const started: string[] = [];
  const workerId = new Promise<string>((resolve, reject) => {
    proc.on("message", (m: { ready?: string; started?: string }) => {
      if (m.ready) resolve(m.ready);
      if (m.started) started.push(m.started);
    });
    proc.on("exit", (code, signal) => reject(new Error(`worker exited (${code ?? signal}) before ready`)));
  });
  workerId.catch(() => {});
  return { proc, workerId, started };
}

export function kill(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.proc.once("exit", () => resolve());
    child.proc.kill("SIGKILL");
  });
}

/** Checks the run log: no job started after its done was committed, and counts runs. */
export function readRunLog(log: string): {
  starts: Map<string, number>;
  doneTwice: string[];
  rerunAfterDone: string[];
  /** The workers' error lines (`error <during> <ms> <message>`), counted by `during` in `errorsBy`. */
  errors: string[];
  errorsBy: Record<string, number>;
} {
  const starts = new Map<string, number>();
  const done = new Map<string, number>();
  const doneTwice: string[] = [];
  const rerunAfterDone: string[] = [];
  const errors: string[] = [];
  const errorsBy: Record<string, number> = {};
  let text = "";
  try {
    text = readFileSync(log, "utf8");
  } catch {}
  for (const line of text.split("\n")) {
    const [what, id] = line.split(" ");
    if (!id) continue;
    if (what === "start") {
      starts.set(id, (starts.get(id) ?? 0) + 1);
      if (done.has(id)) rerunAfterDone.push(id);
    } else if (what === "error") {
      errors.push(line);
      errorsBy[id] = (errorsBy[id] ?? 0) + 1;
    } else if (what === "done") {
      if (done.has(id)) doneTwice.push(id);
      done.set(id, 1);
    }
  }
  return { starts, doneTwice, rerunAfterDone, errors, errorsBy };
}

/** Every job done or dead-lettered, none queued or processing. */
export async function expectSettled(soniq: Soniq, queue: string, total: number): Promise<void> {
  const stats = await soniq.jobs.stats({ queue });
  expect(stats.processing).toBe(0);
  expect(stats.queued).toBe(0);
  expect(stats.done + stats.dead_letter).toBe(total);
}

const figures: string[] = [];
export function figure(row: Record<string, string | number>): void {
  figures.push(`| ${Object.values(row).join(" | ")} |`);
  process.stdout.write(`FAULT FIGURE ${JSON.stringify(row)}\n`);
}
export function printFigures(): void {
  process.stdout.write(
    `\n| scenario | backend | size | lost | run more than once | rerun after done | left processing | time |\n|---|---|---|---|---|---|---|---|\n${figures.join("\n")}\n`,
  );
}
