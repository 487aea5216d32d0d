/**
 * The binary without a prepared database: version, help, usage errors (exit 2), the default database, and
 * the one-line errors for a missing file, a refused connection, a missing database and missing tables.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually } from "@soniq/testkit";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProgram } from "../src/program.js";
import {
  assertBuilt,
  expectNoRunningChildren,
  json,
  postgresDb,
  soniqCli,
  start,
  type TestDb,
} from "./cli.js";

const PLAIN = fileURLToPath(new URL("./fixtures/plain.mjs", import.meta.url));
/** Every command and command group the program defines, read from it (so a new one is checked too). */
const paths = (command: Command, prefix: string[] = []): string[][] =>
  command.commands.flatMap((c) => [[...prefix, c.name()], ...paths(c, [...prefix, c.name()])]);
const COMMANDS = paths(createProgram());

describe("soniq basics", () => {
  let dir: string;
  let pgNotSetUp: TestDb;
  const cli = (args: string[], env: Record<string, string> = {}) => soniqCli(args, { cwd: dir, env });

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), "soniq-cli-basics-"));
    pgNotSetUp = postgresDb();
    await pgNotSetUp.create();
  });

  afterAll(async () => {
    expectNoRunningChildren();
    rmSync(dir, { recursive: true, force: true });
    await pgNotSetUp?.drop();
  });

  it("cli/version: --version prints the CLI and core versions, exit 0", async () => {
    const r = await cli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+ \(@soniq\/core \d+\.\d+\.\d+\)$/);
  });

  it("cli/help-everywhere: every command and group has --help with examples, exit 0", async () => {
    const top = await cli(["--help"]);
    expect(top.code).toBe(0);
    for (const name of [
      "setup",
      "worker",
      "status",
      "dead-letter",
      "queues",
      "schedules",
      "audit",
      "dashboard",
      "mcp",
    ]) {
      expect(top.stdout).toContain(name);
    }
    expect(top.stdout).toContain("Exit codes: 0 ok, 1 failure");
    expect(COMMANDS).toContainEqual(["jobs", "explain"]);
    expect(COMMANDS).toContainEqual(["jobs"]);
    const helps = await Promise.all(COMMANDS.map((c) => cli([...c, "--help"])));
    for (const [i, r] of helps.entries()) {
      expect(r.code, COMMANDS[i]?.join(" ")).toBe(0);
      expect(r.stdout, COMMANDS[i]?.join(" ")).toContain("Examples:");
      expect(r.stdout, COMMANDS[i]?.join(" ")).toContain("--database-url");
      expect(r.stdout, COMMANDS[i]?.join(" ")).toContain("--redact <paths>");
      expect(r.stdout, COMMANDS[i]?.join(" ")).toContain("--no-redact");
    }
  });

  it("cli/usage-exit-2: unknown command, unknown flag, bad value, bad URL, a group without a command", async () => {
    for (const args of [
      ["nope"],
      ["status", "--bogus"],
      ["jobs", "list", "--limit", "zero"],
      ["status", "--database-url", "mysql://x"],
      ["jobs"],
      ["jobs", "show"],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
    }
    const bad = await cli(["status", "--database-url", "mysql://x"]);
    expect(bad.stderr.trim()).toMatch(/^error \[SONIQ_CLI_USAGE\] unsupported database URL/);
  });

  it("db/sqlite-missing: operator commands refuse a missing file and say to run setup", async () => {
    const r = await cli(["status"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(
      /^error \[SONIQ_CLI_DATABASE_MISSING\] no SQLite database at .*soniq\.db\. Run soniq setup/,
    );
    expect(existsSync(join(dir, "soniq.db"))).toBe(false);
  });

  it("db/sqlite-not-set-up: a file without Soniq's tables says to run setup", async () => {
    writeFileSync(join(dir, "empty.db"), "");
    const r = await cli(["dead-letter", "list", "--database-url", `sqlite:${join(dir, "empty.db")}`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(
      /^error \[SONIQ_CLI_NOT_SET_UP\] Soniq's tables are missing in sqlite:.*Run soniq setup/,
    );
  });

  it("db/default-and-env: setup creates ./soniq.db by default; SONIQ_DATABASE_URL is honoured", async () => {
    const r = await cli(["setup"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("sqlite:./soniq.db");
    expect(existsSync(join(dir, "soniq.db"))).toBe(true);
    const viaEnv = await cli(["setup", "--json"], { SONIQ_DATABASE_URL: `sqlite:${join(dir, "env.db")}` });
    expect(viaEnv.code).toBe(0);
    expect(json<{ appliedNow: string[] }>(viaEnv).appliedNow.length).toBeGreaterThan(0);
    expect(existsSync(join(dir, "env.db"))).toBe(true);
  });

  it("db/postgres-errors: refused connection, missing database, missing tables: one line each, exit 1", async () => {
    const refused = await cli(["status", "--database-url", "postgres://postgres@127.0.0.1:1/nope"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      /^error \[SONIQ_CLI_CONNECTION_REFUSED\] cannot connect to postgres:/,
    );
    const url = new URL(pgNotSetUp.url);
    url.pathname = "/soniq_cli_no_such_database";
    const missing = await cli(["status", "--database-url", url.toString()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toMatch(/^error \[SONIQ_CLI_DATABASE_MISSING\]/);
    const notSetUp = await cli(["jobs", "list", "--database-url", pgNotSetUp.url]);
    expect(notSetUp.code).toBe(1);
    expect(notSetUp.stderr.trim()).toMatch(/^error \[SONIQ_CLI_NOT_SET_UP\] .*Run soniq setup/);
    for (const r of [refused, missing, notSetUp]) expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("worker/module-errors: a missing file, or a module without a Soniq export, exits 1", async () => {
    const missing = await cli(["worker", "./nope.js"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\[SONIQ_CLI_MODULE\] no module at/);
    writeFileSync(join(dir, "empty.mjs"), "export const answer = 42;\n");
    const empty = await cli(["worker", "./empty.mjs"]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/exports no Soniq instance/);
  });

  it("worker/default-export-js: a plain .mjs default export runs and stops on SIGINT, exit 0", async () => {
    const worker = start(["worker", PLAIN], { cwd: dir });
    await eventually(
      () =>
        expect(worker.stdout()).toMatch(
          /started\s+worker .* on memory: queues \*, concurrency 10, 0 job\(s\): none/,
        ),
      {
        timeoutMs: 15_000,
      },
    );
    worker.child.kill("SIGINT");
    const exited = await worker.exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect(exited.stdout).toContain("stopped gracefully");
  });
});
