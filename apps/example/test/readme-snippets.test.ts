/**
 * Every ```ts block in the root README is tagged `snippet=<name>`, type-checked against the real packages,
 * and run; each run is checked for what the README says it does. A renamed API breaks this test.
 *
 * Blocks are written verbatim under apps/example/.snippets/ (so they resolve the workspace packages), run with
 * tsx in a temporary working directory (their ./soniq.db and ./app.db land there), then removed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresDatabase, tempDir } from "./support.js";

const appDir = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = join(appDir, "..", "..");
// One folder per run, so two runs in the same checkout never remove each other's files.
const snippetDir = join(appDir, ".snippets", `run-${process.pid}-${Date.now()}`);
// tsx as a loader in the snippet's own node process (not the tsx CLI, which runs a child): signals sent to
// the process reach the snippet's handlers directly.
const tsxLoader = pathToFileURL(join(appDir, "node_modules", "tsx", "dist", "loader.mjs")).href;
const vitestBin = join(appDir, "node_modules", ".bin", "vitest");

/** The fenced ```ts blocks of a markdown text, with the name from `snippet=<name>` (null when untagged). */
function extractSnippets(markdown: string): { name: string | null; code: string }[] {
  const blocks: { name: string | null; code: string }[] = [];
  const fence = /^```(ts|typescript)([^\n]*)\n([\s\S]*?)^```$/gm;
  for (const match of markdown.matchAll(fence)) {
    const name = /\bsnippet=([a-z0-9-]+)/.exec(match[2] ?? "")?.[1] ?? null;
    blocks.push({ name, code: match[3] ?? "" });
  }
  return blocks;
}

const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
const snippets = extractSnippets(readme);
const byName = new Map(snippets.map((s) => [s.name, s.code]));
const fileOf = (name: string) => join(snippetDir, name === "testkit" ? "testkit.test.ts" : `${name}.ts`);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, stopWhen?: RegExp) {
  return new Promise<Run>((resolve, reject) => {
    const child: ChildProcess = spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let stopping = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not finish in 60 s\n${stdout}\n${stderr}`));
    }, 60_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      // A long-running snippet (a worker) is asked to stop, as an operator would, once it did its work;
      // once: what it prints while stopping must not send a second signal.
      if (!stopping && stopWhen?.test(stdout)) {
        stopping = true;
        child.kill("SIGTERM");
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const runSnippet = (name: string, cwd: string, env?: NodeJS.ProcessEnv, stopWhen?: RegExp) =>
  run(process.execPath, ["--import", tsxLoader, "--conditions=source", fileOf(name)], cwd, env, stopWhen);

function expectSuccess(result: Run): void {
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
}

describe("example/readme-snippets", () => {
  const work = tempDir();
  let postgres: Awaited<ReturnType<typeof createPostgresDatabase>>;

  beforeAll(async () => {
    mkdirSync(snippetDir, { recursive: true });
    for (const { name, code } of snippets) if (name) writeFileSync(fileOf(name), code);
    writeFileSync(
      join(snippetDir, "vitest.config.ts"),
      'import { defineConfig } from "vitest/config";\n' +
        'export default defineConfig({ resolve: { conditions: ["source"] }, ssr: { resolve: { conditions: ["source"] } },' +
        ' test: { include: ["testkit.test.ts"] } });\n',
    );
    postgres = await createPostgresDatabase();
  }, 30_000);
  afterAll(async () => {
    rmSync(snippetDir, { recursive: true, force: true });
    try {
      rmdirSync(dirname(snippetDir)); // only when no other run is using it
    } catch {}
    work.remove();
    await postgres?.drop();
  }, 30_000);

  it("example/readme-snippets-tagged: every ts block is a named snippet, and the names are the expected ones", () => {
    expect(snippets.filter((s) => s.name === null)).toEqual([]);
    expect(snippets.map((s) => s.name)).toEqual([
      "quickstart",
      "tx-postgres",
      "tx-sqlite",
      "results",
      "dead-letter",
      "recurring",
      "workflows",
      "durable-steps",
      "versions",
      "tracing",
      "webhooks",
      "webhook-verify",
      "choose-backend",
      "testkit",
    ]);
  });

  it("example/readme-snippets-typecheck: every snippet type-checks against the packages' source", () => {
    const configPath = join(repoRoot, "tsconfig.base.json");
    const { config } = ts.readConfigFile(configPath, ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config, ts.sys, repoRoot);
    const program = ts.createProgram({
      rootNames: snippets.map((s) => fileOf(s.name as string)),
      options: { ...parsed.options, customConditions: ["source"], noEmit: true },
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName.startsWith(snippetDir))
      .map((d) => {
        const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
        const file = d.file ? d.file.fileName.slice(snippetDir.length + 1) : "?";
        return `${file}:${where ? where.line + 1 : "?"}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
      });
    expect(diagnostics).toEqual([]);
  }, 60_000);

  it("example/readme-snippet-quickstart: the job runs on a worker, which stops gracefully on SIGTERM", async () => {
    const cwd = join(work.path, "quickstart");
    mkdirSync(cwd);
    const result = await runSnippet("quickstart", cwd, {}, /emails\.send_welcome done:/);
    expectSuccess(result);
    const id = /enqueued ([0-9a-f-]{36})/.exec(result.stdout)?.[1];
    expect(result.stdout).toContain("emails.send_welcome done: { sent: true, attempt: 1 }");
    // `logger: console` prints the README's readable line, not an object dump before the message.
    expect(result.stdout).toContain(
      `sending the welcome email jobId=${id} jobName=emails.send_welcome attempt=1 to=ada@example.com\n`,
    );
    const db = new Database(join(cwd, "soniq.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT job_name, status FROM soniq_jobs WHERE id = ?").get(id)).toEqual({
        job_name: "emails.send_welcome",
        status: "done",
      });
    } finally {
      db.close();
    }
  }, 60_000);

  it("example/readme-snippet-tx-postgres: the order and its job commit together", async () => {
    const result = await runSnippet("tx-postgres", work.path, { DATABASE_URL: postgres.url });
    expectSuccess(result);
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const orders = await client.query("SELECT id FROM orders");
      const jobs = await client.query("SELECT job_name, args FROM soniq_jobs");
      expect(orders.rows).toHaveLength(1);
      expect(jobs.rows).toEqual([{ job_name: "orders.send_invoice", args: { orderId: orders.rows[0].id } }]);
    } finally {
      await client.end();
    }
  }, 60_000);

  it("example/readme-snippet-tx-sqlite: the order and its job commit together", async () => {
    const cwd = join(work.path, "tx-sqlite");
    mkdirSync(cwd);
    const result = await runSnippet("tx-sqlite", cwd);
    expectSuccess(result);
    expect(result.stdout).toMatch(/^order 1 placed, invoice job [0-9a-f-]{36}\n$/);
    const db = new Database(join(cwd, "app.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT id FROM orders").all()).toEqual([{ id: 1 }]);
      expect(db.prepare("SELECT job_name, args FROM soniq_jobs").all()).toEqual([
        { job_name: "orders.send_invoice", args: '{"orderId":1}' },
      ]);
    } finally {
      db.close();
    }
  }, 60_000);

  it("example/readme-snippet-results: progress and results print what its comments say", async () => {
    const result = await runSnippet("results", work.path);
    expectSuccess(result);
    const promised = (byName.get("results") ?? "")
      .split("\n")
      .filter((line) => line.startsWith("// -> "))
      .map((line) => line.slice("// -> ".length));
    expect(promised).toHaveLength(3);
    expect(result.stdout.trimEnd().split("\n")).toEqual(promised);
  }, 60_000);

  it("example/readme-snippet-dead-letter: prints exactly what its comments say", async () => {
    const result = await runSnippet("dead-letter", work.path);
    expectSuccess(result);
    // A `// -> ...` line after each console.log is the output the README promises.
    const promised = (byName.get("dead-letter") ?? "")
      .split("\n")
      .filter((line) => line.startsWith("// -> "))
      .map((line) => line.slice("// -> ".length));
    expect(promised).toHaveLength(5);
    expect(result.stdout.trimEnd().split("\n")).toEqual(promised);
  }, 60_000);

  it("example/readme-snippet-workflows: the held flow resumes after the replay, printing what its comments say", async () => {
    const result = await runSnippet("workflows", work.path);
    expectSuccess(result);
    const promised = (byName.get("workflows") ?? "")
      .split("\n")
      .filter((line) => line.startsWith("// -> "))
      .map((line) => line.slice("// -> ".length));
    expect(promised).toHaveLength(4);
    expect(result.stdout.trimEnd().split("\n")).toEqual(promised);
  }, 60_000);

  it("example/readme-snippet-durable-steps: the step runs once across a sleep and a signal, as its comments say", async () => {
    const result = await runSnippet("durable-steps", work.path);
    expectSuccess(result);
    const promised = (byName.get("durable-steps") ?? "")
      .split("\n")
      .filter((line) => line.startsWith("// -> "))
      .map((line) => line.slice("// -> ".length));
    expect(promised).toHaveLength(4);
    expect(result.stdout.trimEnd().split("\n")).toEqual(promised);
  }, 60_000);

  it("example/readme-snippet-versions: the old job is upcast and run by the new code, as its comments say", async () => {
    const result = await runSnippet("versions", work.path);
    expectSuccess(result);
    const promised = (byName.get("versions") ?? "")
      .split("\n")
      .filter((line) => line.startsWith("// -> "))
      .map((line) => line.slice("// -> ".length));
    expect(promised).toHaveLength(2);
    expect(result.stdout.trimEnd().split("\n")).toEqual(promised);
  }, 60_000);

  it("example/readme-snippet-recurring: fires each night once on the manual clock, as its comments say", async () => {
    const result = await runSnippet("recurring", work.path);
    expectSuccess(result);
    const promised = (byName.get("recurring") ?? "")
      .split("\n")
      .filter((line) => line.startsWith("// -> "))
      .map((line) => line.slice("// -> ".length));
    expect(promised).toHaveLength(3);
    expect(result.stdout.trimEnd().split("\n")).toEqual(promised);
  }, 60_000);

  it("example/readme-snippet-tracing: prints the two spans of one job, as its comments say", async () => {
    const result = await runSnippet("tracing", work.path);
    expectSuccess(result);
    const promised = (byName.get("tracing") ?? "")
      .split("\n")
      .filter((line) => line.startsWith("// -> "))
      .map((line) => line.slice("// -> ".length));
    expect(promised).toHaveLength(2);
    expect(result.stdout.trimEnd().split("\n")).toEqual(promised);
  }, 60_000);

  it("example/readme-snippet-choose-backend: loads the backend the URL names", async () => {
    const cwd = join(work.path, "choose");
    mkdirSync(cwd);
    const sqlite = await runSnippet("choose-backend", cwd, { SONIQ_DATABASE_URL: "" });
    const memory = await runSnippet("choose-backend", cwd, { SONIQ_DATABASE_URL: "memory" });
    const postgresRun = await runSnippet("choose-backend", cwd, { SONIQ_DATABASE_URL: postgres.url });
    for (const result of [sqlite, memory, postgresRun]) expectSuccess(result);
    expect(sqlite.stdout).toMatch(/^sqlite \{[^}]*transactionalEnqueue: true/);
    expect(memory.stdout).toMatch(/^memory \{[^}]*transactionalEnqueue: false/);
    expect(postgresRun.stdout).toMatch(/^postgres \{[^}]*notify: true/);
    expect(readFileSync(join(cwd, "soniq.db")).length).toBeGreaterThan(0);
  }, 60_000);

  it("example/readme-snippet-testkit: the conformance suite runs and passes on the stand-in backend", async () => {
    const result = await run(vitestBin, ["run", "--config", "vitest.config.ts"], snippetDir, {
      NO_COLOR: "1",
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Test Files {2}1 passed \(1\)/);
    // Cases that need an inspector or a fault hook are not registered (suite/applicability lists them);
    // every registered test passes and none is skipped.
    expect(result.stdout).toMatch(/Tests {2}[1-9]\d+ passed \(\d+\)/);
    expect(result.stdout).not.toContain("skipped");
  }, 60_000);
});
