/**
 * A process survives the garbage collector freeing the SQLite driver's objects. better-sqlite3 12 built
 * against Node 24.19+ aborts there (`Assertion failed: (env) != nullptr` in `Statement::~Statement()`,
 * nodejs/node#65446): this test fails on Node 24 with 12. CI's Node 22, 24 and 26 passes run it with
 * better-sqlite3 13, which the backend's `^12 || ^13` gives users on Node 22 and newer. The child keeps statements alive for a while before
 * dropping them: statements that die young are freed without the abort; those that live long enough to be
 * promoted (a statement cache's, a long-lived connection's) are not. On Node 24 with 12 the child aborts
 * within a fifth of a second, every run; it passes on Node 20 with 12 and on Node 24 with 13.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { newJob } from "@soniq/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { migrated, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());
const child = fileURLToPath(new URL("./fixtures/gc-child.mjs", import.meta.url));

function run(
  args: string[],
): Promise<{ code: number | null; signal: string | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--single-threaded-gc", child, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    proc.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    proc.on("error", reject);
    proc.on("exit", (code, signal) => resolve({ code, signal, out, err }));
  });
}

describe("sqlite/driver-gc", () => {
  it("connections and statements the garbage collector frees do not abort the process", async () => {
    const file = tmp.file();
    const backend = await migrated(file);
    await backend.jobs.enqueue(newJob({ queue: "gc" }), {});
    await backend.close();
    const batches = 40;
    const perBatch = 1000;
    const result = await run([file, String(batches), String(perBatch)]);
    expect({ code: result.code, signal: result.signal }, result.err.slice(0, 2000)).toEqual({
      code: 0,
      signal: null,
    });
    // Every statement ran: the one job counted by each of the 40,000 statements.
    expect(result.out).toContain(`DONE ${batches * perBatch}`);
  }, 60_000);
});
