/** `redact`: what operators see of args, results, progress and errors; the handler and the store keep the truth. */
import { describe, expect, it } from "vitest";
import { PermanentError } from "../src/index.js";
import { createRedactor, REDACTED, REDACTION_FAILED } from "../src/observability/redact.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();

describe("redact/paths", () => {
  const redact = createRedactor(["password", "card.number", "**.token", "headers.*", "items.*.secret"]);

  it("redact/path-forms: top-level, nested, `*` and `**`; other fields unchanged", () => {
    const row = redact.row({
      jobName: "billing.charge",
      args: {
        user: "ann",
        password: "hunter2",
        card: { number: "4111111111111111", expiry: "12/29" },
        deep: { nested: { token: "tok_live_abc" } },
        token: "tok_top_level",
        headers: { authorization: "Bearer xyz123", accept: "json" },
        items: [{ secret: "s3cr3t!", ok: 1 }, { ok: 2 }],
      },
      result: { token: "res_token_1", fine: true },
      lastError:
        "Error: card 4111111111111111 declined for ann (password hunter2)\n    at charge (billing.ts:1)",
      queue: "default",
    });
    expect(row.args).toEqual({
      user: "ann",
      password: REDACTED,
      card: { number: REDACTED, expiry: "12/29" },
      deep: { nested: { token: REDACTED } },
      token: REDACTED,
      headers: { authorization: REDACTED, accept: REDACTED },
      items: [{ secret: REDACTED, ok: 1 }, { ok: 2 }],
    });
    expect(row.result).toEqual({ token: REDACTED, fine: true });
    expect(row.lastError).toBe(
      `Error: card ${REDACTED} declined for ann (password ${REDACTED})\n    at charge (billing.ts:1)`,
    );
    expect(row.queue).toBe("default");
  });

  it("redact/error-alone: an error shown without its row scrubs the values the row's paths hold", () => {
    const job = { jobName: "a", args: { password: "hunter2" } };
    expect(redact.error("bad password hunter2", "a", job)).toBe(`bad password ${REDACTED}`);
    expect(redact.error(null, "a", job)).toBeNull();
    expect(redact.value("args", { password: "x" }, "a")).toEqual({ password: REDACTED });
  });

  it("redact/none: without redact every value is shown as stored", () => {
    const none = createRedactor(undefined);
    const row = { jobName: "a", args: { password: "p" }, lastError: "e" };
    expect(none.active).toBe(false);
    expect(none.row(row)).toBe(row);
  });
});

describe("redact/function", () => {
  it("redact/function-fields: called per field with the job name; an error answer that is not text is JSON", () => {
    const seen: string[] = [];
    const redact = createRedactor((value, { field, jobName }) => {
      seen.push(`${jobName}:${field}`);
      if (field === "error") return (value as string).replace(/\d{12,}/g, "####");
      if (field === "result") return { kept: false };
      return field === "args" ? { shown: true } : value;
    });
    const row = redact.row({
      jobName: "a.b",
      args: { pin: 1234 },
      result: 5,
      progress: 0.5,
      lastError: "card 4111111111111111",
    });
    expect(row).toEqual({
      jobName: "a.b",
      args: { shown: true },
      result: { kept: false },
      progress: 0.5,
      lastError: "card ####",
    });
    expect(seen.sort()).toEqual(["a.b:args", "a.b:error", "a.b:progress", "a.b:result"]);
    expect(createRedactor(() => ({ code: 1 })).error("x", "a")).toBe('{"code":1}');
  });

  it("redact/fails-closed: a redact function that throws shows neither the value nor a crash", () => {
    const redact = createRedactor(() => {
      throw new Error("bug in redact");
    });
    expect(redact.row({ jobName: "a", args: { password: "p" }, lastError: "p" })).toEqual({
      jobName: "a",
      args: REDACTION_FAILED,
      lastError: REDACTION_FAILED,
    });
  });
});

describe("redact/option", () => {
  it("redact/invalid: a bad redact option is SONIQ_INVALID_OPTIONS", () => {
    for (const redact of ["password", [""], ["a..b"], [5], ["has space"]]) {
      expect(() => app({ redact: redact as never }), JSON.stringify(redact)).toThrow(
        expect.objectContaining({ code: "SONIQ_INVALID_OPTIONS" }),
      );
    }
  });

  it("redact/store-keeps-truth: the handler and jobs.get see the real args; options.redact shows them redacted", async () => {
    const soniq = app({ redact: ["password"] });
    let received: unknown = null;
    const login = soniq.job("users.login", async (args: { user: string; password: string }) => {
      received = args;
      return { ok: true };
    });
    const { id } = await login.enqueue({ user: "ann", password: "hunter2" });
    await soniq.worker().runOnce();
    expect(received).toEqual({ user: "ann", password: "hunter2" });
    const stored = await soniq.jobs.get(id);
    expect(stored?.args).toEqual({ user: "ann", password: "hunter2" });
    expect(soniq.options.redact.row(stored as NonNullable<typeof stored>).args).toEqual({
      user: "ann",
      password: REDACTED,
    });
  });
});

describe("redact/export", () => {
  it("redact/dead-letter-export: deadLetters.export writes rows through redact, as every operator view shows them", async () => {
    const soniq = app({ redact: ["password"] });
    const login = soniq.job("users.login", async (args: { user: string; password: string }) => {
      throw new PermanentError(`login failed for ${args.user} with password ${args.password}`);
    });
    await login.enqueue({ user: "ann", password: "hunter2-secret" });
    await soniq.worker().runOnce();
    const text = await soniq.deadLetters.export();
    const rows = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows).toHaveLength(1);
    expect(rows[0].args).toEqual({ user: "ann", password: REDACTED });
    expect(text).not.toContain("hunter2-secret");
    const lines: string[] = [];
    const sink = {
      write: (line: string) => {
        lines.push(line);
        return true;
      },
      once: () => sink,
    };
    expect(await soniq.deadLetters.export(undefined, sink)).toBe(1);
    expect(lines.join("")).not.toContain("hunter2-secret");
  });
});

describe("redact/depth", () => {
  it("redact/fails-closed-deep: a subtree deeper than the walk is hidden whole, not shown unredacted", () => {
    const redact = createRedactor(["**.password"]);
    let deep: Record<string, unknown> = { password: "hunter2-deep", note: "x" };
    for (let i = 0; i < 70; i++) deep = { next: deep };
    const shown = JSON.stringify(redact.row({ jobName: "a", args: deep }).args);
    expect(shown).not.toContain("hunter2-deep");
    expect(shown).toContain(REDACTED);
    // Shallow values are still shown as they are.
    expect(redact.row({ jobName: "a", args: { a: { b: 1 } } }).args).toEqual({ a: { b: 1 } });
  });
});

describe("redact/args-hash", () => {
  it("redact/args-hash-hidden: a redacting view hides argsHash (a hash of the raw args a short secret falls to)", async () => {
    const soniq = app({ redact: ["code"] });
    const verify = soniq.job("otp.verify", async () => null, { unique: true });
    const { id } = await verify.enqueue({ code: "123456" });
    const stored = await soniq.jobs.get(id);
    expect(stored?.argsHash).toMatch(/\w{8,}/);
    const shown = soniq.options.redact.row(stored as NonNullable<typeof stored>);
    expect(shown.args).toEqual({ code: REDACTED });
    expect(shown.argsHash).toBe(REDACTED);
    expect(createRedactor(undefined).row(stored as NonNullable<typeof stored>).argsHash).toBe(
      stored?.argsHash,
    );
  });
});
