/**
 * Recurring jobs end to end on every backend, with a manual clock: no sleeping, hours of schedule in
 * milliseconds of test. Each test gets fresh storage (a new memory backend, SQLite file or Postgres
 * database). Leadership changes need the backend's leases on the manual clock: memory only here (the
 * SQL backends' takeover runs in real processes in schedules-processes.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ALL_KINDS, type BackendKind, memoryKind } from "./runtime-support.js";
import { HOUR, ledger, MINUTE, world as openWorld, type World } from "./schedules-support.js";

const iso = (ms: number) => new Date(ms).toISOString();
const T0 = Date.UTC(2026, 0, 1);

const opened: World[] = [];
afterEach(async () => {
  for (const w of opened.splice(0)) await w.close();
});

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "schedules on %s",
  { timeout: 30_000 },
  (_name, make) => {
    async function world(start: Date | number = T0): Promise<World> {
      const w = await openWorld(make as () => BackendKind, start);
      opened.push(w);
      return w;
    }
    const jobsOf = (w: World, jobName: string) => w.jobsOf(jobName);

    describe("schedules/firing", () => {
      it("an interval fires one interval after it was first stored, then every interval, one job per tick", async () => {
        const w = await world(T0);
        const p = w.process();
        p.schedules.declare("cleanup.run", { every: "15m", args: { deep: false } });
        const scheduler = p.scheduler({ checkIntervalMs: MINUTE });
        await scheduler.start();
        await w.clock.advance(HOUR);
        await scheduler.stop();
        expect(await ledger(p, "cleanup.run")).toEqual([
          [iso(T0 + 15 * MINUTE), "fired", null],
          [iso(T0 + 30 * MINUTE), "fired", null],
          [iso(T0 + 45 * MINUTE), "fired", null],
          [iso(T0 + 60 * MINUTE), "fired", null],
        ]);
        const jobs = await jobsOf(w, "cleanup.run");
        expect(jobs.map((j) => j.args)).toEqual([
          { deep: false },
          { deep: false },
          { deep: false },
          { deep: false },
        ]);
        const history = await p.schedules.history("cleanup.run");
        expect(new Set(history.map((t) => t.jobId))).toEqual(new Set(jobs.map((j) => j.id)));
        const row = await p.schedules.get("cleanup.run");
        expect(row).toMatchObject({
          name: "cleanup.run",
          jobName: "cleanup.run",
          cron: null,
          every: 15 * MINUTE,
          paused: false,
          nextRunAt: new Date(T0 + 75 * MINUTE),
          lastRunAt: new Date(T0 + 60 * MINUTE),
          // The newest tick's job (the job rows' own order can tie: SQLite stamps them with its own clock).
          lastJobId: history[0]?.jobId,
          createdAt: expect.any(Date),
        });
      });

      it("a restart never postpones an interval: the next fire stays on the first anchor", async () => {
        const w = await world(T0);
        const first = w.process();
        first.schedules.declare("cleanup.run", { every: "1h" });
        const a = first.scheduler({ checkIntervalMs: MINUTE });
        await a.start();
        await w.clock.advance(30 * MINUTE);
        await a.stop();
        await w.clock.advance(15 * MINUTE);
        const second = w.process(); // a new process declaring the same schedule
        second.schedules.declare("cleanup.run", { every: "1h" });
        const b = second.scheduler({ checkIntervalMs: MINUTE });
        await b.start();
        expect((await second.schedules.get("cleanup.run"))?.nextRunAt).toEqual(new Date(T0 + HOUR));
        await w.clock.advance(HOUR + 15 * MINUTE); // to T0 + 2h
        await b.stop();
        expect(await ledger(second, "cleanup.run")).toEqual([
          [iso(T0 + HOUR), "fired", null],
          [iso(T0 + 2 * HOUR), "fired", null],
        ]);
      });

      it("a changed declaration re-times the schedule; an unchanged one keeps its next fire", async () => {
        const w = await world(T0);
        const p1 = w.process();
        p1.schedules.declare("reports.daily", { cron: "0 6 * * *", args: { v: 1 } });
        await p1
          .scheduler()
          .start()
          .then(() => undefined);
        const before = await p1.schedules.get("reports.daily");
        await w.clock.advance(HOUR);
        const p2 = w.process();
        p2.schedules.declare("reports.daily", { cron: "0 6 * * *", args: { v: 2 } });
        const s2 = p2.scheduler();
        await s2.start();
        const kept = await p2.schedules.get("reports.daily");
        expect(kept?.nextRunAt).toEqual(before?.nextRunAt);
        expect(kept?.args).toEqual({ v: 2 });
        await s2.stop();
        const p3 = w.process();
        p3.schedules.declare("reports.daily", { cron: "0 7 * * *", timezone: "Europe/Berlin" });
        const s3 = p3.scheduler();
        await s3.start();
        await s3.stop();
        expect((await p3.schedules.get("reports.daily"))?.nextRunAt).toEqual(
          new Date("2026-01-01T06:00:00Z"),
        );
      });
    });

    describe("schedules/catch-up after downtime", () => {
      async function downtime(catchUp: "none" | "latest" | { withinMs: number }) {
        const w = await world(T0);
        const p = w.process();
        p.schedules.declare("reports.hourly", { cron: "0 * * * *", catchUp });
        const a = p.scheduler({ checkIntervalMs: MINUTE });
        await a.start();
        await w.clock.advance(HOUR + 5 * MINUTE); // 01:00 fires on time
        await a.stop();
        await w.clock.advance(3 * HOUR + 25 * MINUTE); // nobody runs through 02:00, 03:00, 04:00; now 04:30
        const b = w.process().scheduler({ checkIntervalMs: MINUTE });
        await b.start();
        await b.stop();
        return { rows: await ledger(p, "reports.hourly"), jobs: await jobsOf(w, "reports.hourly") };
      }

      it('"latest" (default) fires the most recent missed tick once and records the others missed', async () => {
        const { rows, jobs } = await downtime("latest");
        expect(rows).toEqual([
          ["2026-01-01T01:00:00.000Z", "fired", null],
          ["2026-01-01T02:00:00.000Z", "missed", "superseded"],
          ["2026-01-01T03:00:00.000Z", "missed", "superseded"],
          ["2026-01-01T04:00:00.000Z", "fired", "catch_up"],
        ]);
        expect(jobs).toHaveLength(2);
      });

      it('"none" fires nothing that was missed', async () => {
        const { rows, jobs } = await downtime("none");
        expect(rows.slice(1).map((r) => r[1])).toEqual(["missed", "missed", "missed"]);
        expect(jobs).toHaveLength(1);
      });

      it("{ withinMs } fires every missed tick inside the window, oldest first", async () => {
        const { rows, jobs } = await downtime({ withinMs: 2 * HOUR });
        expect(rows.slice(1)).toEqual([
          ["2026-01-01T02:00:00.000Z", "missed", "outside_window"],
          ["2026-01-01T03:00:00.000Z", "fired", "catch_up"],
          ["2026-01-01T04:00:00.000Z", "fired", "catch_up"],
        ]);
        expect(jobs).toHaveLength(3);
      });
    });

    describe("schedules/control from any process", () => {
      it("pause (from another process) is seen at the next check: ticks are skipped; resume does not catch them up", async () => {
        const w = await world(T0);
        const runner = w.process();
        runner.schedules.declare("reports.hourly", { cron: "0 * * * *" });
        const s = runner.scheduler({ checkIntervalMs: MINUTE });
        await s.start();
        const admin = w.process();
        expect(await admin.schedules.pause("reports.hourly")).toBe(true);
        await w.clock.advance(2 * HOUR + 30 * MINUTE);
        expect((await admin.schedules.get("reports.hourly"))?.paused).toBe(true);
        expect(await admin.schedules.resume("reports.hourly")).toBe(true);
        await w.clock.advance(HOUR);
        await s.stop();
        expect(await ledger(admin, "reports.hourly")).toEqual([
          ["2026-01-01T01:00:00.000Z", "skipped", "paused"],
          ["2026-01-01T02:00:00.000Z", "skipped", "paused"],
          ["2026-01-01T03:00:00.000Z", "fired", null],
        ]);
        expect(await jobsOf(w, "reports.hourly")).toHaveLength(1);
      });

      it("ticks that pass while paused with no scheduler running are skipped at resume, not caught up", async () => {
        const w = await world(T0);
        const p = w.process();
        p.schedules.declare("reports.hourly", { cron: "0 * * * *" });
        const a = p.scheduler({ checkIntervalMs: MINUTE });
        await a.start();
        await a.stop();
        await p.schedules.pause("reports.hourly");
        await w.clock.advance(3 * HOUR + 30 * MINUTE);
        await p.schedules.resume("reports.hourly");
        const b = p.scheduler({ checkIntervalMs: MINUTE });
        await b.start();
        await b.stop();
        expect((await ledger(p, "reports.hourly")).map((r) => r[1])).toEqual([
          "skipped",
          "skipped",
          "skipped",
        ]);
        expect(await jobsOf(w, "reports.hourly")).toHaveLength(0);
        expect((await p.schedules.get("reports.hourly"))?.nextRunAt).toEqual(
          new Date("2026-01-01T04:00:00Z"),
        );
      });

      it("trigger fires now without a scheduler, even while paused, and is recorded with tickAt = now", async () => {
        const w = await world(T0 + 10 * MINUTE);
        const p = w.process();
        p.schedules.declare("reports.hourly", { cron: "0 * * * *", args: { kind: "manual" } });
        const id = await p.schedules.trigger("reports.hourly"); // not stored yet: trigger stores it
        const job = await w.backend.jobs.get(id);
        expect(job).toMatchObject({ jobName: "reports.hourly", args: { kind: "manual" }, status: "queued" });
        await p.schedules.pause("reports.hourly");
        await w.clock.advance(MINUTE);
        const second = await p.schedules.trigger("reports.hourly");
        expect(second).not.toBe(id);
        const history = await p.schedules.history("reports.hourly");
        expect(history.map((t) => [t.tickAt.getTime(), t.outcome, t.reason, t.jobId])).toEqual([
          [T0 + 11 * MINUTE, "fired", "trigger", second],
          [T0 + 10 * MINUTE, "fired", "trigger", id],
        ]);
        // A manual fire does not move the schedule's next fire.
        expect((await p.schedules.get("reports.hourly"))?.nextRunAt).toEqual(new Date(T0 + HOUR));
        await expect(p.schedules.trigger("reports.unknown")).rejects.toMatchObject({
          code: "SONIQ_INVALID_ARGUMENT",
        });
      });

      it("remove stops a running scheduler's fires at its next check; a process that declares it stores it again", async () => {
        const w = await world(T0);
        const p = w.process();
        p.schedules.declare("reports.hourly", { cron: "0 * * * *" });
        const s = p.scheduler({ checkIntervalMs: MINUTE });
        await s.start();
        await w.clock.advance(HOUR + MINUTE);
        expect(await w.process().schedules.remove("reports.hourly")).toBe(true);
        expect(await w.process().schedules.remove("reports.hourly")).toBe(false);
        await w.clock.advance(2 * HOUR);
        expect(await p.schedules.get("reports.hourly")).toBeNull();
        expect(await p.schedules.history("reports.hourly")).toEqual([]);
        expect(await jobsOf(w, "reports.hourly")).toHaveLength(1);
        await s.stop();
        const again = p.scheduler({ checkIntervalMs: MINUTE });
        await again.start();
        await again.stop();
        expect((await p.schedules.get("reports.hourly"))?.nextRunAt).toEqual(
          new Date("2026-01-01T04:00:00Z"),
        );
      });

      it("upcoming lists the next fire times in the schedule's timezone, DST included", async () => {
        const w = await world(Date.UTC(2026, 2, 27, 12));
        const p = w.process();
        p.schedules.declare("reports.night", { cron: "30 2 * * *", timezone: "Europe/Berlin" });
        expect((await p.schedules.upcoming("reports.night", 3)).map((d) => d.toISOString())).toEqual([
          "2026-03-28T01:30:00.000Z",
          "2026-03-29T01:00:00.000Z",
          "2026-03-30T00:30:00.000Z",
        ]);
        p.schedules.declare("cleanup.run", { every: "10m" });
        const s = p.scheduler();
        await s.start();
        await s.stop();
        expect(
          (await p.schedules.upcoming("cleanup.run", 2)).map((d) => d.getTime() - w.clock.now()),
        ).toEqual([10 * MINUTE, 20 * MINUTE]);
      });
    });

    describe("schedules/DST", () => {
      it("Berlin: the nonexistent 02:30 fires at 03:00 CEST, the repeated one fires once", async () => {
        const w = await world(Date.UTC(2026, 2, 27));
        const p = w.process();
        p.schedules.declare("reports.night", { cron: "30 2 * * *", timezone: "Europe/Berlin" });
        const s = p.scheduler({ checkIntervalMs: HOUR });
        await s.start();
        await w.clock.advanceTo(Date.UTC(2026, 2, 31));
        await s.stop();
        expect((await ledger(p, "reports.night")).map((r) => r[0])).toEqual([
          "2026-03-27T01:30:00.000Z",
          "2026-03-28T01:30:00.000Z",
          "2026-03-29T01:00:00.000Z",
          "2026-03-30T00:30:00.000Z",
        ]);
        const fall = await world(Date.UTC(2026, 9, 24));
        const q = fall.process();
        q.schedules.declare("reports.night", { cron: "30 2 * * *", timezone: "Europe/Berlin" });
        const t = q.scheduler({ checkIntervalMs: HOUR });
        await t.start();
        await fall.clock.advanceTo(Date.UTC(2026, 9, 27));
        await t.stop();
        expect((await ledger(q, "reports.night")).map((r) => r[0])).toEqual([
          "2026-10-24T00:30:00.000Z",
          "2026-10-25T00:30:00.000Z",
          "2026-10-26T01:30:00.000Z",
        ]);
      });

      it("New York: 02:30 on spring-forward day fires at 03:00 EDT; 01:30 on fall-back day fires once", async () => {
        const w = await world(Date.UTC(2026, 2, 7));
        const p = w.process();
        p.schedules.declare("reports.spring", { cron: "30 2 * * *", timezone: "America/New_York" });
        p.schedules.declare("reports.fall", { cron: "30 1 * * *", timezone: "America/New_York" });
        const s = p.scheduler({ checkIntervalMs: HOUR });
        await s.start();
        await w.clock.advanceTo(Date.UTC(2026, 2, 10));
        expect((await ledger(p, "reports.spring")).map((r) => r[0])).toEqual([
          "2026-03-07T07:30:00.000Z",
          "2026-03-08T07:00:00.000Z",
          "2026-03-09T06:30:00.000Z",
        ]);
        await s.stop();
        const fall = await world(Date.UTC(2026, 9, 31));
        const q = fall.process();
        q.schedules.declare("reports.fall", { cron: "30 1 * * *", timezone: "America/New_York" });
        const t = q.scheduler({ checkIntervalMs: HOUR });
        await t.start();
        await fall.clock.advanceTo(Date.UTC(2026, 10, 3));
        await t.stop();
        expect((await ledger(q, "reports.fall")).map((r) => r[0])).toEqual([
          "2026-10-31T05:30:00.000Z",
          "2026-11-01T05:30:00.000Z",
          "2026-11-02T06:30:00.000Z",
        ]);
      });
    });
  },
);

describe("schedules/leadership", () => {
  const world = async (start: number) => {
    const w = await openWorld(memoryKind, start);
    opened.push(w);
    return w;
  };

  it("three schedulers over 10 ticks make exactly one job per tick, across the leader's death", async () => {
    const w = await world(T0);
    const procs = [w.process(), w.process(), w.process()];
    const mortals = procs.map((p) => {
      p.schedules.declare("cleanup.run", { every: "1m" });
      return p.mortalScheduler({ checkIntervalMs: 1000 });
    });
    for (const m of mortals) await m.scheduler.start();
    const leaders = () => mortals.filter((m) => m.scheduler.isLeader);
    expect(leaders()).toHaveLength(1);
    await w.clock.advance(5 * MINUTE);
    const first = leaders()[0];
    first?.kill();
    await w.clock.advance(5 * MINUTE);
    const rows = await ledger(procs[0] as (typeof procs)[0], "cleanup.run");
    expect(rows).toEqual(Array.from({ length: 10 }, (_, i) => [iso(T0 + (i + 1) * MINUTE), "fired", null]));
    const jobs = await w.jobsOf("cleanup.run");
    expect(jobs).toHaveLength(10);
    const live = mortals.filter((m) => m !== first);
    expect(live.filter((m) => m.scheduler.isLeader)).toHaveLength(1);
    for (const m of live) await m.scheduler.stop();
  });

  it("a standby takes over within four check intervals of the leader's death, and at once after stop()", async () => {
    const w = await world(T0);
    const a = w.process().mortalScheduler({ checkIntervalMs: 1000 });
    const b = w.process().scheduler({ checkIntervalMs: 1000 });
    await a.scheduler.start();
    await b.start();
    expect([a.scheduler.isLeader, b.isLeader]).toEqual([true, false]);
    a.kill();
    const died = w.clock.now();
    while (!b.isLeader) await w.clock.advance(100);
    expect(w.clock.now() - died).toBeLessThanOrEqual(4 * 1000);
    const c = w.process().scheduler({ checkIntervalMs: 1000 });
    await c.start();
    expect(c.isLeader).toBe(false);
    await b.stop();
    const stopped = w.clock.now();
    while (!c.isLeader) await w.clock.advance(100);
    expect(w.clock.now() - stopped).toBeLessThanOrEqual(1000);
    await c.stop();
  });
});
