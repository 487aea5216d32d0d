/** The recurring-jobs API of a Soniq instance: declaration checks, job options, workers that schedule. */
import { memoryBackend } from "@soniq/backend-memory";
import { isSoniqError, Soniq } from "@soniq/core";
import { manualClock } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { memoryKind } from "./runtime-support.js";
import { ledger, MINUTE, world } from "./schedules-support.js";

function codeOf(fn: () => unknown): [string | undefined, unknown] {
  try {
    fn();
  } catch (err) {
    if (!isSoniqError(err)) throw err;
    return [err.code, err.context.field];
  }
  throw new Error("expected a SoniqError");
}

describe("schedules/app: schedules.declare()", () => {
  it("throws synchronously, naming the field; a second declaration of a name is SONIQ_INVALID_ARGUMENT", () => {
    const soniq = new Soniq({ backend: memoryBackend() });
    const report = soniq.job("reports.nightly", async () => "ok");
    expect(codeOf(() => soniq.schedules.declare(report, { cron: "61 * * * *" }))).toEqual([
      "SONIQ_INVALID_OPTIONS",
      "cron",
    ]);
    expect(
      codeOf(() => soniq.schedules.declare(report, { cron: "0 2 * * *", timezone: "Nowhere/City" })),
    ).toEqual(["SONIQ_INVALID_OPTIONS", "timezone"]);
    expect(codeOf(() => soniq.schedules.declare(report, { every: "often" }))).toEqual([
      "SONIQ_INVALID_OPTIONS",
      "every",
    ]);
    expect(codeOf(() => soniq.schedules.declare(report, {}))).toEqual(["SONIQ_INVALID_OPTIONS", "cron"]);
    expect(codeOf(() => soniq.schedules.declare(report, { cron: "0 2 * * *", every: "1h" }))).toEqual([
      "SONIQ_INVALID_OPTIONS",
      "cron",
    ]);
    expect(soniq.schedules.declare(report, { cron: "0 2 * * *" }).name).toBe("reports.nightly");
    expect(codeOf(() => soniq.schedules.declare(report, { every: "1h" }))).toEqual([
      "SONIQ_INVALID_ARGUMENT",
      undefined,
    ]);
    expect(soniq.schedules.declare(report, { every: "1h", name: "reports.hourly" }).name).toBe(
      "reports.hourly",
    );
    expect(codeOf(() => soniq.schedules.declare("Not A Name", { every: "1h" }))[0]).toBe(
      "SONIQ_INVALID_TASK_NAME",
    );
  });

  it("a fired job takes the schedule's queue and priority, else the job's own options", async () => {
    const w = await world(memoryKind);
    const p = w.process();
    const report = p.job("reports.nightly", async () => "ok", {
      queue: "reports",
      priority: 5,
      maxAttempts: 7,
    });
    p.schedules.declare(report, { every: "1m" });
    p.schedules.declare(report, {
      every: "1m",
      name: "reports.urgent",
      queue: "urgent",
      priority: 1,
      args: { urgent: true },
    });
    const s = p.scheduler({ checkIntervalMs: 1000 });
    await s.start();
    await w.clock.advance(MINUTE);
    await s.stop();
    const [plain] = await p.jobs.list({ queue: "reports" });
    const [urgent] = await p.jobs.list({ queue: "urgent" });
    expect(plain).toMatchObject({ jobName: "reports.nightly", priority: 5, maxAttempts: 7, args: {} });
    expect(urgent).toMatchObject({
      jobName: "reports.nightly",
      priority: 1,
      maxAttempts: 7,
      args: { urgent: true },
    });
  });
});

describe("schedules/app: backends and lifecycle", () => {
  it("a backend without the schedules facet (the capability not declared) is refused at setup() once a schedule is declared", async () => {
    const { schedules: _none, ...withoutSchedules } = memoryBackend();
    const soniq = new Soniq({ backend: withoutSchedules as never });
    soniq.schedules.declare(
      soniq.job("reports.none", async () => null),
      { every: "1h" },
    );
    await expect(soniq.setup()).rejects.toMatchObject({
      code: "SONIQ_UNSUPPORTED",
      context: expect.objectContaining({ capability: "schedules" }),
    });
    await soniq.close();
  });

  it("scheduler options are checked; a scheduler starts once", async () => {
    const soniq = new Soniq({ backend: memoryBackend() });
    expect(codeOf(() => soniq.scheduler({ checkIntervalMs: 5 }))).toEqual([
      "SONIQ_INVALID_OPTIONS",
      "checkIntervalMs",
    ]);
    expect(codeOf(() => soniq.worker({ schedules: "yes" as never }))).toEqual([
      "SONIQ_INVALID_OPTIONS",
      "schedules",
    ]);
    const s = soniq.scheduler();
    await s.start();
    await expect(s.start()).rejects.toMatchObject({ code: "SONIQ_INVALID_STATE" });
    await soniq.close();
    expect(s.state).toBe("stopped");
  });

  it("close() stops the instance's schedulers and gives up leadership at once", async () => {
    const clock = manualClock();
    const backend = memoryBackend({ now: clock.now });
    const a = new Soniq({ backend, clock });
    const sa = a.scheduler({ checkIntervalMs: 1000 });
    await sa.start();
    expect(sa.isLeader).toBe(true);
    expect(await backend.leases.tryAcquire("soniq:scheduler", "someone-else", 1000)).toBe(false);
    await a.close();
    expect(await backend.leases.tryAcquire("soniq:scheduler", "someone-else", 1000)).toBe(true);
  });

  it("worker({ schedules: true }) fires due ticks and runs their jobs; stop() stops both", async () => {
    const w = await world(memoryKind);
    const p = w.process();
    const ran: unknown[] = [];
    let resolveRan: () => void = () => undefined;
    const twoRuns = new Promise<void>((resolve) => {
      resolveRan = resolve;
    });
    const cleanup = p.job("cleanup.run", async (args) => {
      ran.push(args);
      if (ran.length === 2) resolveRan();
    });
    p.schedules.declare(cleanup, { every: "1m", args: { deep: true } });
    const worker = p.worker({ schedules: { checkIntervalMs: 1000 }, pollIntervalMs: 60_000 });
    await worker.start();
    await w.clock.advance(2 * MINUTE);
    await twoRuns;
    await worker.stop();
    expect(ran).toEqual([{ deep: true }, { deep: true }]);
    expect((await ledger(p, "cleanup.run")).map((r) => r[1])).toEqual(["fired", "fired"]);
    expect(await w.backend.leases.tryAcquire("soniq:scheduler", "someone-else", 1000)).toBe(true);
  });

  it("a failed check is logged and the next check carries on", async () => {
    const clock = manualClock();
    const inner = memoryBackend({ now: clock.now });
    let failures = 1;
    const backend = {
      ...inner,
      schedules: {
        ...inner.schedules,
        list: () => (failures-- > 0 ? Promise.reject(new Error("database away")) : inner.schedules.list()),
      },
    };
    const errors: string[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (_: unknown, msg: string) => errors.push(msg) };
    const soniq = new Soniq({ backend, clock, logger });
    soniq.schedules.declare("cleanup.run", { every: "1m" });
    const s = soniq.scheduler({ checkIntervalMs: 1000 });
    await s.start();
    expect(errors).toEqual(["scheduler check failed; retrying at the next interval"]);
    await clock.advance(MINUTE);
    await s.stop();
    expect((await ledger(soniq, "cleanup.run")).map((r) => r[1])).toEqual(["fired"]);
  });

  it("a schedule declared after the scheduler started is stored at its next check and fires", async () => {
    const w = await world(memoryKind);
    const p = w.process();
    const s = p.scheduler({ checkIntervalMs: 1000 });
    await s.start();
    p.schedules.declare("cleanup.run", { every: "1m" });
    await w.clock.advance(1000);
    expect((await p.schedules.get("cleanup.run"))?.nextRunAt).toEqual(new Date(w.clock.now() + MINUTE));
    await w.clock.advance(MINUTE);
    await s.stop();
    expect((await ledger(p, "cleanup.run")).map((r) => r[1])).toEqual(["fired"]);
  });

  it("upcoming and history check their count and limit", async () => {
    const soniq = new Soniq({ backend: memoryBackend() });
    soniq.schedules.declare("cleanup.run", { every: "1m" });
    await expect(soniq.schedules.upcoming("cleanup.run", 0)).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    await expect(soniq.schedules.history("cleanup.run", { limit: 5000 })).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    await expect(soniq.schedules.upcoming("nothing.here")).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    expect(await soniq.schedules.pause("nothing.here")).toBe(false);
    expect(await soniq.schedules.resume("nothing.here")).toBe(false);
    expect(await soniq.schedules.get("nothing.here")).toBeNull();
  });
});
