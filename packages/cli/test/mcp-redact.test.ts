/** `soniq mcp --module <app>`: the app's `redact` applied to every tool's answer. */
import { fileURLToPath } from "node:url";
import { eventually } from "@soniq/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteDb, start } from "./cli.js";
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

    // Without the module there is no redact: the store kept the real values.
    const plain = await connectAgent(["--database-url", s.db.url], { cwd: s.db.dir });
    expect((await plain.call("dead_letter", { id: bad.id })).text).toContain("hunter3");
  });
});
