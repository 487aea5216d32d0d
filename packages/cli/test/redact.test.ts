/** The app's `redact` (given with --module) applied to what the CLI shows: show, list, export, explain, schedules, the worker log. */
import { fileURLToPath } from "node:url";
import { eventually } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { type Result, soniqCli, sqliteDb, start } from "./cli.js";
import { useSeededDatabase } from "./seed.js";

const REDACTED_APP = fileURLToPath(new URL("./fixtures/redacted.ts", import.meta.url));
const SECRET = /hunter[2-9]|tok_live_secret/;

describe("soniq with the app's redact", () => {
  const s = useSeededDatabase(sqliteDb);
  const withModule = (...args: string[]): Promise<Result> => s.cli(...args, "--module", REDACTED_APP);

  it("redact/cli-everywhere: show, list, export, explain and schedules print redacted values; the store keeps them", async () => {
    const local = s.app;
    const ok = await local.jobs.enqueue(
      "secret.login",
      { user: "ann", password: "hunter2" },
      { queue: "secrets" },
    );
    const bad = await local.jobs.enqueue(
      "secret.login",
      { user: "bad", password: "hunter3" },
      { queue: "secrets" },
    );
    // A flow step held by a dead-lettered parent: explain quotes the parent's error (issue 43).
    const flow = await local.flows.start({
      steps: {
        a: { job: "secret.login", args: { user: "bad", password: "hunter4" }, options: { queue: "secrets" } },
        b: {
          job: "secret.login",
          args: { user: "ann", password: "hunter5" },
          options: { queue: "secrets" },
          dependsOn: ["a"],
        },
      },
    });
    const worker = start(["worker", REDACTED_APP, "--queues", "secrets", "--schedules"], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    try {
      await eventually(async () => expect(await local.deadLetters.get(bad.id)).not.toBeNull(), {
        timeoutMs: 20_000,
      });
      await eventually(
        async () => expect(await local.deadLetters.get(flow.jobs.a as string)).not.toBeNull(),
        {
          timeoutMs: 20_000,
        },
      );
      await eventually(async () => expect((await local.jobs.get(ok.id))?.status).toBe("done"), {
        timeoutMs: 20_000,
      });
      await eventually(async () => expect(await local.schedules.get("secret.nightly")).not.toBeNull(), {
        timeoutMs: 20_000,
      });
      await eventually(() => expect(worker.stdout()).toMatch(/dead\s+secret\.login/), { timeoutMs: 20_000 });
    } finally {
      worker.child.kill("SIGTERM");
      await worker.exited;
    }
    expect(worker.stdout()).toContain("login refused for password [redacted]");
    expect(worker.stdout()).not.toMatch(SECRET);
    const outputs = await Promise.all([
      withModule("jobs", "show", ok.id),
      withModule("jobs", "show", ok.id, "--json"),
      withModule("jobs", "list", "--queue", "secrets", "--json"),
      withModule("jobs", "explain", bad.id, "--json"),
      withModule("dead-letter", "show", bad.id),
      withModule("dead-letter", "list", "--queue", "secrets", "--json"),
      withModule("dead-letter", "export", "--queue", "secrets"),
      withModule("dead-letter", "export", "--queue", "secrets", "--format", "csv"),
      withModule("schedules", "show", "secret.nightly", "--json"),
      withModule("schedules", "list", "--json"),
      withModule("jobs", "explain", flow.jobs.b as string, "--json"),
    ]);
    for (const r of outputs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toMatch(SECRET);
    }
    expect(outputs[1]?.stdout).toContain('"password": "[redacted]"');
    expect(outputs[4]?.stdout).toContain("login refused for password [redacted]");
    expect(outputs[10]?.stdout).toContain("held_by_dead_letter");
    expect(outputs[10]?.stdout).toContain("login refused for password [redacted]");
    // Without the module the CLI has no redact: the store kept the real values.
    const plain = await s.cli("jobs", "show", ok.id, "--json");
    expect(plain.stdout).toContain("hunter2");
    expect((await s.cli("dead-letter", "export", "--queue", "secrets")).stdout).toContain("hunter3");
  });

  it("redact/cli-paths: --redact or SONIQ_REDACT gives the CLI's own instance field paths, without a module", async () => {
    const { id } = await s.app.jobs.enqueue("secret.login", {
      user: "ann",
      password: "hunter8",
      session: { token: "tok_live_secret" },
    });
    const viaFlag = await s.cli("jobs", "show", id, "--json", "--redact", "password,**.token");
    expect(viaFlag.code, viaFlag.stderr).toBe(0);
    expect(viaFlag.stdout).not.toMatch(SECRET);
    expect(JSON.parse(viaFlag.stdout)).toMatchObject({
      args: { user: "ann", password: "[redacted]", session: { token: "[redacted]" } },
    });
    const viaEnv = await soniqCli(["jobs", "list", "--json", "--database-url", s.db.url], {
      cwd: s.db.dir,
      env: { SONIQ_REDACT: "password, **.token" },
    });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    expect(viaEnv.stdout).toContain('"password": "[redacted]"');
    expect(viaEnv.stdout).not.toMatch(SECRET);
  });
});
