/**
 * `soniq mcp` and redaction (issue 43): the app's `redact` (--module) or paths from --redact / SONIQ_REDACT
 * applied to every tool's answer; no rule at all is refused unless --no-redact; the rule in force is named on
 * stderr at start (stdout is the protocol channel).
 */
import { fileURLToPath } from "node:url";
import { eventually } from "@soniq/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE, soniqCli, sqliteDb, start } from "./cli.js";
import { closeClients, connectAgent } from "./mcp-client.js";
import { useSeededDatabase } from "./seed.js";

const REDACTED_APP = fileURLToPath(new URL("./fixtures/redacted.ts", import.meta.url));
const SECRET = /hunter[2-9]|tok_live_secret/;

describe("soniq mcp with the app's redact", () => {
  const s = useSeededDatabase(sqliteDb);
  afterAll(closeClients);

  it("mcp/redacted: jobs, dead letters, explain and schedules answer redacted values; the store keeps them", async () => {
    const ok = await s.app.jobs.enqueue(
      "secret.login",
      { user: "ann", password: "hunter2" },
      { queue: "secrets" },
    );
    const bad = await s.app.jobs.enqueue(
      "secret.login",
      { user: "bad", password: "hunter3" },
      { queue: "secrets" },
    );
    const worker = start(["worker", REDACTED_APP, "--queues", "secrets", "--schedules"], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    try {
      await eventually(
        async () => {
          expect(await s.app.deadLetters.get(bad.id)).not.toBeNull();
          expect((await s.app.jobs.get(ok.id))?.status).toBe("done");
          expect(await s.app.schedules.get("secret.nightly")).not.toBeNull();
        },
        { timeoutMs: 20_000 },
      );
    } finally {
      worker.child.kill("SIGTERM");
      await worker.exited;
    }

    const a = await connectAgent(["--module", REDACTED_APP, "--allow-writes"], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    expect(a.stderr()).toContain("redacting: the module's redact");
    const answers = await Promise.all([
      a.call("job", { id: ok.id }),
      a.call("jobs", { queue: "secrets" }),
      a.call("dead_letter", { id: bad.id }),
      a.call("dead_letters", { queue: "secrets" }),
      a.call("explain", { id: bad.id }),
      a.call("schedules"),
    ]);
    for (const answer of answers) {
      expect(answer.isError, answer.text).toBe(false);
      expect(answer.text).not.toMatch(SECRET);
    }
    const [job, , dead, , why, schedules] = answers;
    expect(job?.json()).toMatchObject({
      args: { password: "[redacted]" },
      result: { session: { token: "[redacted]" } },
    });
    expect(dead?.json()).toMatchObject({
      args: { user: "bad", password: "[redacted]" },
      lastError: expect.stringContaining("login refused for password [redacted]"),
    });
    expect(why?.text).toContain("[redacted]");
    expect(schedules?.json()).toEqual([
      expect.objectContaining({ name: "secret.nightly", args: { user: "cron", password: "[redacted]" } }),
    ]);

    // Without the module (and with --no-redact) there is no redact: the store kept the real values.
    const plain = await connectAgent(["--no-redact", "--database-url", s.db.url], { cwd: s.db.dir });
    expect((await plain.call("dead_letter", { id: bad.id })).text).toContain("hunter3");
  });

  it("mcp/refused-without-redaction: no rule and no --no-redact exits 1 before serving, nothing on stdout", async () => {
    const bare = await soniqCli(["mcp", "--database-url", s.db.url], { cwd: s.db.dir });
    expect(bare.code).toBe(1);
    expect(bare.stdout).toBe("");
    expect(bare.stderr.trim()).toMatch(
      /^error \[SONIQ_CLI_REFUSED\] refusing to serve MCP without redaction/,
    );
    for (const remedy of ["model provider", "--redact", "SONIQ_REDACT", "--module", "--no-redact"])
      expect(bare.stderr, remedy).toContain(remedy);
    // An app module without `redact` is no rule either: refused once the app is loaded.
    const plainApp = await soniqCli(["mcp", "--module", FIXTURE], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    expect(plainApp.code).toBe(1);
    expect(plainApp.stdout).toBe("");
    expect(plainApp.stderr).toMatch(/\[SONIQ_CLI_REFUSED\] .*sets no redact.*--no-redact/);
  });

  it("mcp/redact-env: SONIQ_REDACT paths apply to the CLI's own instance, and the start line names them", async () => {
    const { id } = await s.app.jobs.enqueue("secret.login", { user: "env", password: "hunter6" });
    const a = await connectAgent(["--database-url", s.db.url], {
      cwd: s.db.dir,
      env: { SONIQ_REDACT: " password, **.token ,," },
    });
    const job = await a.call("job", { id });
    expect(job.text).not.toMatch(SECRET);
    expect(job.json()).toMatchObject({ args: { user: "env", password: "[redacted]" } });
    const jobs = await a.call("jobs", { name: "secret.login" });
    expect(jobs.text).not.toMatch(SECRET);
    expect(a.stderr()).toContain("redacting paths: password, **.token");
    const viaFlag = await connectAgent(["--redact", "password", "--database-url", s.db.url], {
      cwd: s.db.dir,
    });
    expect((await viaFlag.call("job", { id })).json()).toMatchObject({ args: { password: "[redacted]" } });
    expect(viaFlag.stderr()).toContain("redacting paths: password");
  });

  it("mcp/no-redact: --no-redact serves raw values and says so on stderr", async () => {
    const { id } = await s.app.jobs.enqueue("secret.login", { user: "raw", password: "hunter7" });
    const a = await connectAgent(["--no-redact", "--database-url", s.db.url], { cwd: s.db.dir });
    expect((await a.call("job", { id })).json()).toMatchObject({ args: { password: "hunter7" } });
    expect(a.stderr()).toContain("no redaction (--no-redact): agents read raw args, results and errors");
  });

  it("mcp/redact-usage: a bad path, an empty list, or --redact beside a module is a usage error (exit 2)", async () => {
    const bad = await soniqCli(["mcp", "--database-url", s.db.url], {
      cwd: s.db.dir,
      env: { SONIQ_REDACT: "password,card..number" },
    });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/^error \[SONIQ_CLI_USAGE\] SONIQ_REDACT: .*card\.\.number/);
    const badFlag = await soniqCli(["jobs", "list", "--redact", "pass word", "--database-url", s.db.url], {
      cwd: s.db.dir,
    });
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--redact: .*pass word/);
    const empty = await soniqCli(["jobs", "list", "--redact", " , ", "--database-url", s.db.url], {
      cwd: s.db.dir,
    });
    expect(empty.code).toBe(2);
    const beside = await soniqCli(["mcp", "--module", REDACTED_APP, "--redact", "password"], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    expect(beside.code).toBe(2);
    expect(beside.stderr).toContain("the module's redact applies; drop --redact");
    const besidePlain = await soniqCli(["jobs", "list", "--module", FIXTURE], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url, SONIQ_REDACT: "password" },
    });
    expect(besidePlain.code).toBe(2);
    expect(besidePlain.stderr).toMatch(/sets no redact.*drop --redact/);
  });
});
