/**
 * Versions of a job's arguments (DESIGN.md section 20) through the app API on the memory backend: definitions
 * refuse bad versions and upcasters, enqueues store the version, the runner upcasts older args before the
 * schema, a missing or throwing upcaster dead-letters naming the step, and a worker older than a job gives it
 * back without spending an attempt (logged once; explain says `newer_version`).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSoniqError, type Logger, type Soniq } from "../src/index.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { caught } from "./support.js";

const app = memoryApps();
const drain = (soniq: Soniq) => soniq.worker({ concurrency: 4 }).runOnce();

/** A logger that keeps its warnings. */
function recordingLogger() {
  const warnings: { obj: unknown; msg: string | undefined }[] = [];
  const noop = () => {};
  const logger: Logger = {
    trace: noop,
    debug: noop,
    info: noop,
    warn: (obj: unknown, msg?: string) => warnings.push({ obj, msg }),
    error: noop,
    fatal: noop,
    child: () => logger,
  } as unknown as Logger;
  return { logger, warnings };
}

describe("versions", () => {
  it("versions/definition-refuses-bad-input: a version that is not a positive integer, upcaster keys outside 1..version-1, values that are not functions, upcasters without a version", () => {
    const soniq = app();
    const cases: [unknown, string][] = [
      [{ version: 0 }, "version"],
      [{ version: 1.5 }, "version"],
      [{ version: "2" }, "version"],
      [{ version: 3, upcast: { 3: (a: unknown) => a } }, "upcast.3"],
      [{ version: 3, upcast: { 0: (a: unknown) => a } }, "upcast.0"],
      [{ version: 3, upcast: { one: (a: unknown) => a } }, "upcast.one"],
      [{ version: 3, upcast: { 1: "not a function" } }, "upcast.1"],
      [{ upcast: { 1: (a: unknown) => a } }, "upcast"],
      [{ version: 2, upcast: [(a: unknown) => a] }, "upcast"],
    ];
    for (const [options, field] of cases) {
      const err = caught(() => soniq.job("v.bad", async () => null, options as never));
      expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS"), JSON.stringify(options)).toBe(true);
      expect((err as { context: { field: string } }).context.field).toBe(field);
    }
    expect(soniq.jobs.names()).toEqual([]);
  });

  it("versions/upcast-then-schema: older args pass the upcasters in order, then the schema; the row keeps the version it was enqueued with", async () => {
    const soniq = app();
    const seen: unknown[] = [];
    const schema = z.object({ to: z.string(), locale: z.string() });
    const v1 = soniq.job("emails.welcome", async () => null, { version: 1 });
    const handle = await v1.enqueue({ email: "ann@example.com" });
    expect((await soniq.jobs.get(handle.id))?.argsVersion).toBe(1);
    const soniq3 = app({}, soniq.backend);
    soniq3.job(
      "emails.welcome",
      async (args) => {
        seen.push(args);
        return "sent";
      },
      {
        version: 3,
        schema,
        upcast: {
          1: (a: { email: string }) => ({ ...a, locale: "en" }),
          2: (a: { email: string; locale: string }) => ({ to: a.email, locale: a.locale }),
        },
      },
    );
    await drain(soniq3);
    expect(await soniq3.jobs.waitFor(handle.id, { timeoutMs: 5_000 })).toEqual({
      status: "done",
      result: "sent",
    });
    expect(seen).toEqual([{ to: "ann@example.com", locale: "en" }]);
    const current = await soniq3.jobs.enqueue("emails.welcome", { to: "bob@example.com", locale: "fr" });
    expect((await soniq3.jobs.get(current.id))?.argsVersion).toBe(3);
    const byName = await soniq3.jobs.enqueue("emails.welcome", { email: "cy@example.com" }, { version: 1 });
    expect((await soniq3.jobs.get(byName.id))?.argsVersion).toBe(1);
    const refused = await soniq3.jobs
      .enqueue("emails.welcome", { nope: true }, { version: 2 })
      .catch((e: unknown) => e);
    expect(isSoniqError(refused, "SONIQ_TASK_ARGS_INVALID")).toBe(true);
  });

  it("versions/missing-or-throwing-upcaster: a gap or a throw dead-letters with invalid_arguments naming the version step", async () => {
    const soniq = app({ allowUnknownJobNames: true });
    const gap = await soniq.jobs.enqueue("v.gap", { a: 1 }, { version: 1 });
    const bad = await soniq.jobs.enqueue("v.throws", { a: 1 }, { version: 2 });
    soniq.job("v.gap", async () => "ran", { version: 3, upcast: { 2: (a: unknown) => a } });
    soniq.job("v.throws", async () => "ran", {
      version: 3,
      upcast: {
        2: () => {
          throw new Error("no email field");
        },
      },
    });
    await drain(soniq);
    const gapOut = await soniq.jobs.waitFor(gap.id, { timeoutMs: 5_000 });
    expect(gapOut).toMatchObject({ status: "dead_letter", reason: "invalid_arguments" });
    expect((gapOut as { lastError: string }).lastError).toContain("No upcaster from version 1 to 2");
    const badOut = await soniq.jobs.waitFor(bad.id, { timeoutMs: 5_000 });
    expect((badOut as { lastError: string }).lastError).toContain("upcaster from version 2 to 3");
    expect((badOut as { lastError: string }).lastError).toContain("no email field");
  });

  it("versions/newer-given-back: a worker older than the job gives it back without spending an attempt, logs once per (name, version), and explain says newer_version", async () => {
    const backend = memoryBackend();
    const producer = app({}, backend);
    producer.job("v.rolling", async () => "v2", { version: 2 });
    const a = await producer.jobs.enqueue("v.rolling", {});
    const b = await producer.jobs.enqueue("v.rolling", {});
    const { logger, warnings } = recordingLogger();
    const old = app({ logger }, backend);
    const ran: string[] = [];
    old.job("v.rolling", async () => {
      ran.push("v1");
      return "v1";
    });
    await old.worker({ newerVersionDelayMs: 60_000 }).runOnce();
    expect(ran).toEqual([]);
    for (const id of [a.id, b.id]) {
      const row = await old.jobs.get(id);
      expect(row).toMatchObject({ status: "queued", attempts: 0, argsVersion: 2 });
      expect((row?.scheduledAt.getTime() ?? 0) - Date.now()).toBeGreaterThan(50_000);
    }
    expect(warnings.filter((w) => String(w.msg).includes("newer than this worker"))).toHaveLength(1);
    const oldWorker = old.worker();
    await oldWorker.start();
    try {
      const explained = await old.jobs.explain(a.id);
      expect(explained.reasons.map((r) => r.code)).toContain("newer_version");
      expect(explained.reasons.find((r) => r.code === "newer_version")?.evidence).toMatchObject({
        version: 2,
        workerVersions: [1],
      });
    } finally {
      await oldWorker.stop();
    }
  });

  it("versions/replay-keeps-version: a dead letter keeps its args version; its replay is checked through the upcasters and runs upcast", async () => {
    const backend = memoryBackend();
    const v1 = app({}, backend);
    v1.job(
      "v.replay",
      async () => {
        throw new Error("down");
      },
      { maxAttempts: 1 },
    );
    const { id } = await v1.jobs.enqueue("v.replay", { n: 1 });
    await drain(v1);
    expect((await v1.deadLetters.get(id))?.argsVersion).toBe(1);
    const v2 = app({}, backend);
    const seen: unknown[] = [];
    v2.job(
      "v.replay",
      async (args) => {
        seen.push(args);
        return "ok";
      },
      {
        version: 2,
        schema: z.object({ count: z.number() }),
        upcast: { 1: (a: { n: number }) => ({ count: a.n }) },
      },
    );
    const replayed = await v2.deadLetters.replay(id);
    expect((await v2.jobs.get(replayed as string))?.argsVersion).toBe(1);
    await drain(v2);
    expect(seen).toEqual([{ count: 1 }]);
  });
});
