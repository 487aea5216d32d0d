/**
 * Schedules over core's real `soniq.schedules`: the list, a schedule's detail with its next fires and tick
 * ledger, pause/resume/trigger with a write key (refused without one), unknown names, the pages; and the
 * same routes on SQLite.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { type Backend, Soniq } from "@soniq/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  call,
  handlerFor,
  json,
  KEYS,
  login,
  READ_KEY,
  SCHEDULE_START,
  type Scheduled,
  scheduledApp,
  WRITE_KEY,
} from "./support.js";

interface ScheduleRow {
  name: string;
  jobName: string;
  cron: string | null;
  every: number | null;
  timezone: string | null;
  args: unknown;
  queue: string | null;
  priority: number | null;
  catchUp: unknown;
  paused: boolean;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastJobId: string | null;
  createdAt: string;
}
interface Tick {
  tickAt: string;
  outcome: string;
  jobId: string | null;
  reason: string | null;
  recordedAt: string;
}
interface Detail {
  schedule: ScheduleRow;
  upcoming: string[];
  history: Tick[];
}
type ErrorBody = { error: { code: string; message: string } };

const HOUR = 3_600_000;
const at = (ms: number) => new Date(SCHEDULE_START.getTime() + ms).toISOString();

let app: Scheduled;
let keyed: ReturnType<typeof handlerFor>;

beforeEach(async () => {
  app = await scheduledApp();
  keyed = handlerFor(app.soniq, { apiKeys: KEYS });
});
afterEach(() => app.soniq.close());

const w = { method: "POST", key: WRITE_KEY } as const;
const r = { key: READ_KEY } as const;

describe("schedule reads (memory backend)", () => {
  it("schedules/list: every stored schedule with core's fields, JSON dates", async () => {
    const res = await call(keyed, "/api/schedules", { key: READ_KEY });
    expect(res.status).toBe(200);
    const { schedules } = await json<{ schedules: ScheduleRow[] }>(res);
    expect(schedules.map((s) => s.name).sort()).toEqual(["reports.hourly", "reports.nightly"]);
    const hourly = schedules.find((s) => s.name === "reports.hourly");
    expect(hourly).toEqual({
      name: "reports.hourly",
      jobName: "reports.build",
      cron: null,
      every: HOUR,
      timezone: null,
      queue: "reports",
      priority: null,
      maxAttempts: null,
      catchUp: "latest",
      paused: false,
      nextRunAt: at(4 * HOUR),
      lastRunAt: at(3 * HOUR),
      lastJobId: app.fired[2],
      createdAt: at(0),
    });
    const nightly = schedules.find((s) => s.name === "reports.nightly");
    expect(nightly).toMatchObject({
      cron: "0 2 * * *",
      timezone: "Europe/Berlin",
      every: null,
      lastJobId: null,
    });
    // 02:00 on 29 March does not exist in Berlin (DST starts): the first fire is 03:00 CEST = 01:00Z
    expect(nightly?.nextRunAt).toBe("2026-03-29T01:00:00.000Z");
  });

  it("schedules/detail: the schedule, its next five fires and the tick ledger, newest first", async () => {
    const res = await call(keyed, "/api/schedules/reports.hourly", { key: READ_KEY });
    expect(res.status).toBe(200);
    const body = await json<Detail>(res);
    expect(body.schedule.name).toBe("reports.hourly");
    expect((body.schedule as unknown as { args: unknown }).args).toEqual({ kind: "hourly" });
    expect(body.upcoming).toEqual([4, 5, 6, 7, 8].map((h) => at(h * HOUR)));
    expect(body.history).toEqual(
      [3, 2, 1].map((h, i) => ({
        tickAt: at(h * HOUR),
        outcome: "fired",
        jobId: app.fired[2 - i],
        reason: null,
        recordedAt: at(h * HOUR),
      })),
    );
    // the fired jobs are real jobs on the schedule's queue with its args
    const job = await app.soniq.jobs.get(app.fired[0] as string);
    expect(job).toMatchObject({ jobName: "reports.build", queue: "reports", args: { kind: "hourly" } });
    const limited = await json<Detail>(await call(keyed, "/api/schedules/reports.hourly?limit=1", r));
    expect(limited.history.map((t) => t.tickAt)).toEqual([at(3 * HOUR)]);
    const nightly = await json<Detail>(await call(keyed, "/api/schedules/reports.nightly", r));
    expect(nightly.history).toEqual([]);
    expect(nightly.upcoming.slice(0, 2)).toEqual(["2026-03-29T01:00:00.000Z", "2026-03-30T00:00:00.000Z"]);
  });

  it("schedules/unknown: an unknown or malformed name is a JSON 404, reads and writes alike", async () => {
    for (const path of ["/api/schedules/reports.nope", "/api/schedules/Not%20A%20Name"]) {
      const res = await call(keyed, path, r);
      expect(res.status, path).toBe(404);
      expect((await json<ErrorBody>(res)).error.code).toBe("not_found");
    }
    for (const action of ["pause", "resume", "trigger"]) {
      const res = await call(keyed, `/api/schedules/reports.nope/${action}`, w);
      expect(res.status, action).toBe(404);
      expect((await json<ErrorBody>(res)).error.code).toBe("not_found");
    }
    expect((await call(keyed, "/api/schedules/reports.hourly?limit=0", r)).status).toBe(400);
    expect((await app.soniq.schedules.list()).length).toBe(2);
  });
});

describe("schedule writes (memory backend)", () => {
  it("schedules/refused: no key, a read key or no keys configured: 401/403 and nothing changes", async () => {
    const open = handlerFor(app.soniq);
    for (const action of ["pause", "resume", "trigger"]) {
      const path = `/api/schedules/reports.hourly/${action}`;
      expect((await call(keyed, path, { method: "POST" })).status, path).toBe(401);
      expect((await call(keyed, path, { method: "POST", key: READ_KEY })).status, path).toBe(403);
      const res = await call(open, path, { method: "POST" });
      expect(res.status, path).toBe(403);
      expect((await json<ErrorBody>(res)).error.code).toBe("writes_disabled");
    }
    expect((await app.soniq.schedules.get("reports.hourly"))?.paused).toBe(false);
    expect(await app.soniq.schedules.history("reports.hourly", { limit: 10 })).toHaveLength(3);
  });

  it("schedules/pause-resume: pause records paused ticks as skipped; resume fires again", async () => {
    const paused = await call(keyed, "/api/schedules/reports.hourly/pause", w);
    expect(paused.status).toBe(200);
    expect(await json(paused)).toEqual({ ok: true, schedule: "reports.hourly", action: "pause" });
    expect((await app.soniq.schedules.get("reports.hourly"))?.paused).toBe(true);

    const scheduler = app.soniq.scheduler({ checkIntervalMs: 60_000 });
    await app.clock.advance(HOUR);
    await scheduler.check();
    const whilePaused = await json<Detail>(await call(keyed, "/api/schedules/reports.hourly", r));
    expect(whilePaused.schedule.paused).toBe(true);
    expect(whilePaused.history[0]).toMatchObject({
      tickAt: at(4 * HOUR),
      outcome: "skipped",
      reason: "paused",
      jobId: null,
    });

    const resumed = await call(keyed, "/api/schedules/reports.hourly/resume", w);
    expect(await json(resumed)).toEqual({ ok: true, schedule: "reports.hourly", action: "resume" });
    await app.clock.advance(HOUR);
    await scheduler.check();
    await scheduler.stop();
    const after = await json<Detail>(await call(keyed, "/api/schedules/reports.hourly", r));
    expect(after.schedule.paused).toBe(false);
    expect(after.history.slice(0, 2).map((t) => [t.tickAt, t.outcome])).toEqual([
      [at(5 * HOUR), "fired"],
      [at(4 * HOUR), "skipped"],
    ]);
  });

  it("schedules/trigger: fires one job now, even while paused, recorded with reason trigger", async () => {
    await call(keyed, "/api/schedules/reports.nightly/pause", w);
    const res = await call(keyed, "/api/schedules/reports.nightly/trigger", w);
    expect(res.status).toBe(200);
    const body = await json<{ ok: boolean; action: string; jobId: string }>(res);
    expect(body).toMatchObject({ ok: true, schedule: "reports.nightly", action: "trigger" });
    const job = await app.soniq.jobs.get(body.jobId);
    expect(job).toMatchObject({ jobName: "reports.build", status: "queued", args: { kind: "nightly" } });
    const detail = await json<Detail>(await call(keyed, "/api/schedules/reports.nightly", r));
    expect(detail.history).toEqual([
      {
        tickAt: at(3 * HOUR),
        outcome: "fired",
        jobId: body.jobId,
        reason: "trigger",
        recordedAt: at(3 * HOUR),
      },
    ]);
    expect(detail.schedule.paused).toBe(true);
    // a second trigger at the same instant is the same tick: core answers the same job, one ledger row
    const again = await json<{ jobId: string }>(
      await call(keyed, "/api/schedules/reports.nightly/trigger", w),
    );
    expect(again.jobId).toBe(body.jobId);
    expect(await app.soniq.schedules.history("reports.nightly")).toHaveLength(1);
  });

  it("schedules/trigger-conflict: a trigger at an instant the ledger recorded as skipped is a 409", async () => {
    await call(keyed, "/api/schedules/reports.hourly/pause", w);
    const scheduler = app.soniq.scheduler({ checkIntervalMs: 60_000 });
    await app.clock.advance(HOUR);
    await scheduler.check(); // the 14:00 tick is recorded skipped, and it is 14:00 now
    await scheduler.stop();
    const res = await call(keyed, "/api/schedules/reports.hourly/trigger", w);
    expect(res.status).toBe(409);
    const err = await json<ErrorBody>(res);
    expect(err.error.code).toBe("conflict");
    expect(err.error.message).toContain("already recorded a skipped tick");
  });
});

describe("schedule pages (memory backend)", () => {
  it("schedules/pages: the list and the detail show real rows; write controls for a write session only", async () => {
    const list = await (await call(keyed, "/schedules", { key: READ_KEY })).text();
    expect(list).toContain('data-schedule="reports.hourly"');
    expect(list).toContain("every 1h");
    expect(list).toContain("0 2 * * * (Europe/Berlin)");
    expect(list).toContain(`href="/jobs/${app.fired[2]}"`);

    const reader = await (await call(keyed, "/schedules/reports.hourly", { key: READ_KEY })).text();
    expect(reader).toContain("Schedule reports.hourly");
    expect(reader).toContain("2026-03-28 14:00:00Z"); // next fire
    expect(reader.match(/data-outcome="fired"/g)).toHaveLength(3);
    expect(reader).not.toContain("data-post=");

    const { cookie } = await login(keyed, WRITE_KEY);
    const writer = await (await call(keyed, "/schedules/reports.hourly", { cookie })).text();
    expect(writer).toContain('data-post="/api/schedules/reports.hourly/pause"');
    expect(writer).toContain('data-post="/api/schedules/reports.hourly/trigger"');
    expect((await call(keyed, "/schedules/reports.nope", { cookie })).status).toBe(404);
  });
});

describe("schedules on SQLite", () => {
  it("schedules/sqlite: list, trigger, pause and the ledger through the dashboard", async () => {
    const dir = mkdtempSync(join(tmpdir(), "soniq-dash-sched-"));
    const soniq = new Soniq({
      backend: sqliteBackend({ filename: join(dir, "soniq.db") }) as Backend<unknown>,
    });
    try {
      await soniq.setup();
      const job = soniq.job("reports.build", async () => ({ ok: true }));
      soniq.schedules.declare(job, {
        name: "reports.daily",
        cron: "30 6 * * *",
        timezone: "America/New_York",
      });
      const scheduler = soniq.scheduler({ checkIntervalMs: 60_000 });
      await scheduler.check();
      await scheduler.stop();
      const h = handlerFor(soniq, { apiKeys: KEYS });

      const { schedules } = await json<{ schedules: ScheduleRow[] }>(await call(h, "/api/schedules", r));
      expect(schedules).toHaveLength(1);
      expect(schedules[0]).toMatchObject({
        name: "reports.daily",
        cron: "30 6 * * *",
        timezone: "America/New_York",
        paused: false,
      });

      const triggered = await json<{ jobId: string }>(
        await call(h, "/api/schedules/reports.daily/trigger", w),
      );
      expect((await soniq.jobs.get(triggered.jobId))?.jobName).toBe("reports.build");
      expect((await call(h, "/api/schedules/reports.daily/pause", w)).status).toBe(200);

      const detail = await json<Detail>(await call(h, "/api/schedules/reports.daily", r));
      expect(detail.schedule.paused).toBe(true);
      expect(detail.schedule.lastJobId).toBe(triggered.jobId);
      expect(detail.history).toMatchObject([{ outcome: "fired", reason: "trigger", jobId: triggered.jobId }]);
      expect(detail.upcoming).toHaveLength(5);
      for (const u of detail.upcoming) expect([10, 11]).toContain(new Date(u).getUTCHours()); // 06:30 EST/EDT
      expect((await call(h, "/api/schedules/reports.gone", r)).status).toBe(404);
    } finally {
      await soniq.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
