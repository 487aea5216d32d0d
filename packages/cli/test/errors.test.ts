/**
 * What the CLI prints for a refused call shows what the app's `redact` lets an operator see: a schema refusal
 * (`SONIQ_TASK_ARGS_INVALID`, here a trigger whose stored args the module's schema refuses) keeps its code, job
 * name and paths, not the validator's message, which quotes the refused value. Without a `redact`, as it is.
 */
import { fileURLToPath } from "node:url";
import type { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, expectNoRunningChildren, openApp, soniqCli, sqliteDb, type TestDb } from "./cli.js";

const STRICT_APP = fileURLToPath(new URL("./fixtures/strict.ts", import.meta.url));
const VALUE = "ann@evil.test";

describe("soniq errors under the app's redact", () => {
  let db: TestDb;
  let app: Soniq;

  beforeAll(async () => {
    assertBuilt();
    db = sqliteDb();
    const setup = await soniqCli(["setup", "--database-url", db.url], { cwd: db.dir });
    expect(setup.code, setup.stderr).toBe(0);
    // Stored by an app without the schema: args the module's schema refuses.
    app = await openApp(db, false);
    app.job("strict.signup", async () => null);
    app.schedules.declare("strict.signup", { name: "strict.nightly", every: "1d", args: { email: VALUE } });
    await app.schedules.trigger("strict.nightly");
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    expectNoRunningChildren();
  });

  const trigger = (env: Record<string, string> = {}) =>
    soniqCli(["schedules", "trigger", "strict.nightly", "--module", STRICT_APP], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url, ...env },
    });

  it("errors/refusal-redacted: a schema refusal under redact names the code, the job and the path, never the quoted value", async () => {
    const r = await trigger();
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("[SONIQ_TASK_ARGS_INVALID]");
    expect(r.stderr).toContain('"strict.signup"');
    expect(r.stderr).toContain("email: [redacted]");
    expect(r.stderr).toContain("validator messages are hidden while redact is active");
    expect(`${r.stdout}${r.stderr}`).not.toContain(VALUE);
  });

  it("errors/refusal-unredacted: without a redact the validator's message is printed as it is", async () => {
    const r = await trigger({ STRICT_NO_REDACT: "1" });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("[SONIQ_TASK_ARGS_INVALID]");
    expect(r.stderr).toContain(`"${VALUE}" is not an allowed address`);
  });
});
