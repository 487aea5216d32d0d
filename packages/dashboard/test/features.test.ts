/**
 * The feature-gated routes light up when core has the documented API (DESIGN.md sections 8 and 9).
 * Core does not have it yet, so this attaches stand-ins with those names to a real Soniq instance and
 * checks what the dashboard calls (including `{ actor: "dashboard:<label>" }`) and what it answers.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, handlerFor, json, KEYS, type Seeded, seededApp, WRITE_KEY } from "./support.js";

let app: Seeded;
let calls: unknown[][];
let handler: ReturnType<typeof handlerFor>;
const minute = 60_000;

beforeEach(async () => {
  app = await seededApp();
  calls = [];
  const record =
    (name: string, result: unknown = undefined) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return result;
    };
  const now = Date.now();
  const schedule = {
    name: "reports.daily",
    jobName: "reports.build",
    cron: "0 9 * * *",
    every: null,
    timezone: "UTC",
    args: {},
    queue: "reports",
    priority: 100,
    catchUp: "latest",
    paused: false,
    nextRunAt: new Date(now + 3_600_000),
    lastRunAt: null,
    lastJobId: null,
    createdAt: new Date(now),
  };
  Object.assign(app.soniq, {
    queues: {
      list: async () => [
        {
          name: "default",
          paused: true,
          concurrency: 5,
          groupConcurrency: null,
          rateLimit: { max: 100, perMs: minute },
          stats: await app.soniq.getQueueStats({ queue: "default" }),
          lagMs: 1500,
        },
      ],
      pause: record("queues.pause"),
      resume: record("queues.resume"),
      configure: record("queues.configure"),
    },
    explain: async (id: string) => ({
      status: "queued",
      verdict: "retry_backoff",
      reasons: [{ code: "retry_backoff", message: `attempt 1 of 3 for ${id}`, evidence: { until: "later" } }],
    }),
    audit: {
      list: record("audit.list", [
        {
          id: 1,
          at: new Date(now),
          actor: "dashboard:ops",
          action: "dead_letter.replay",
          target: "x",
          params: {},
          outcome: "ok",
          details: null,
        },
      ]),
    },
    metrics: {
      query: record("metrics.query", [
        {
          bucketStart: new Date(Math.floor(now / minute) * minute - 2 * minute),
          queue: "default",
          jobName: "emails.send_welcome",
          done: 7,
          failed: 2,
          retried: 1,
          deadLettered: 1,
          snoozed: 0,
          runMsSum: 70,
        },
        {
          bucketStart: new Date(Math.floor(now / minute) * minute - 2 * minute),
          queue: "reports",
          jobName: "reports.build",
          done: 3,
          failed: 0,
          retried: 0,
          deadLettered: 0,
          snoozed: 0,
          runMsSum: 9,
        },
      ]),
    },
    schedules: {
      list: async () => [schedule],
      get: async (name: string) => (name === schedule.name ? schedule : null),
      upcoming: async () => [new Date(now + 3_600_000)],
      history: async () => [
        {
          tickAt: new Date(now),
          outcome: "fired",
          jobId: app.reports[0],
          reason: null,
          recordedAt: new Date(now),
        },
      ],
      pause: record("schedules.pause"),
      resume: record("schedules.resume"),
      trigger: record("schedules.trigger", "new-job-id"),
    },
  });
  handler = handlerFor(app.soniq, { apiKeys: KEYS });
});
afterEach(() => app.soniq.close());

const w = { method: "POST", key: WRITE_KEY } as const;

describe("with queue controls, explain, audit, metrics and schedules in core", () => {
  it("features/queues: list with lag and pause state; pause/configure pass the actor", async () => {
    const body = await json<{ controls: boolean; queues: { lagMs: number; paused: boolean }[] }>(
      await call(handler, "/api/queues", { key: WRITE_KEY }),
    );
    expect(body.controls).toBe(true);
    expect(body.queues[0]).toMatchObject({
      paused: true,
      lagMs: 1500,
      rateLimit: { max: 100, perMs: minute },
    });
    expect((await call(handler, "/api/queues/default/pause", w)).status).toBe(200);
    expect(
      (
        await call(handler, "/api/queues/default/configure", {
          ...w,
          body: { concurrency: null, rateLimit: { max: 5, perMs: 1000 } },
        })
      ).status,
    ).toBe(200);
    expect(calls).toEqual([
      ["queues.pause", "default", { actor: "dashboard:ops" }],
      [
        "queues.configure",
        "default",
        { concurrency: null, rateLimit: { max: 5, perMs: 1000 } },
        { actor: "dashboard:ops" },
      ],
    ]);
    expect(
      (await call(handler, "/api/queues/default/configure", { ...w, body: { concurrency: 0 } })).status,
    ).toBe(400);
    expect((await call(handler, "/api/queues/default/configure", { ...w, body: {} })).status).toBe(400);
    expect((await call(handler, "/api/queues/Bad%20Queue/pause", w)).status).toBe(404);
  });

  it("features/estimated-counts: stats sum queues.list; estimates read as such in the API and as about on the page", async () => {
    const exact = { total: 3, queued: 1, processing: 2, done: 0, dead_letter: 0, cancelled: 0 };
    const big = {
      total: 1_250_004,
      queued: 3,
      processing: 1,
      done: 1_000_000,
      dead_letter: 250_000,
      cancelled: 0,
    };
    const info = (name: string, stats: typeof exact, estimated: string[]) => ({
      name,
      paused: false,
      concurrency: null,
      groupConcurrency: null,
      rateLimit: null,
      stats,
      estimated,
      lagMs: null,
    });
    Object.assign(app.soniq, {
      queues: {
        list: async () => [info("default", big, ["done", "dead_letter"]), info("reports", exact, [])],
      },
    });
    const h = handlerFor(app.soniq, { apiKeys: KEYS });
    const body = await json<{ stats: typeof exact; estimated: string[] }>(
      await call(h, "/api/stats", { key: WRITE_KEY }),
    );
    expect(body.stats).toEqual({
      total: 1_250_007,
      queued: 4,
      processing: 3,
      done: 1_000_000,
      dead_letter: 250_000,
      cancelled: 0,
    });
    expect(body.estimated.sort()).toEqual(["dead_letter", "done", "total"]);
    const queues = await json<{ queues: { estimated: string[] }[] }>(
      await call(h, "/api/queues", { key: WRITE_KEY }),
    );
    expect(queues.queues.map((q) => q.estimated)).toEqual([["done", "dead_letter", "total"], []]);
    const page = await (await call(h, "/", { key: WRITE_KEY })).text();
    expect(page).toContain("about 1.0M");
    expect(page).toContain("about 250k");
    expect(page).toContain('data-stat="queued"><div class="label">queued</div><div class="value">4<');
    expect(page).toContain('data-testid="estimate-note"');
  });

  it("features/explain: the job detail carries the verdict", async () => {
    const body = await json<{ explain: { verdict: string; reasons: { code: string }[] } }>(
      await call(handler, `/api/jobs/${app.retrying[0]}`, { key: WRITE_KEY }),
    );
    expect(body.explain.verdict).toBe("retry_backoff");
    expect(body.explain.reasons[0]?.code).toBe("retry_backoff");
  });

  it("features/metrics: per-minute rows summed into buckets, filtered by queue", async () => {
    const res = await call(handler, "/api/metrics?since=10m&bucketMs=60000", { key: WRITE_KEY });
    const body = await json<{
      buckets: { done: number; failed: number; deadLettered: number }[];
      bucketMs: number;
    }>(res);
    expect(res.status).toBe(200);
    expect(body.buckets.length).toBeGreaterThanOrEqual(10);
    expect(body.buckets.reduce((a, b) => a + b.done, 0)).toBe(10);
    const q = await json<{ buckets: { done: number }[] }>(
      await call(handler, "/api/metrics?since=10m&queue=reports", { key: WRITE_KEY }),
    );
    expect(q.buckets.reduce((a, b) => a + b.done, 0)).toBe(3);
    for (const bad of ["bucketMs=1000", "bucketMs=abc", "since=tomorrowish", "since=1000d&bucketMs=60000"]) {
      expect((await call(handler, `/api/metrics?${bad}`, { key: WRITE_KEY })).status, bad).toBe(400);
    }
  });

  it("features/audit-and-actor: writes pass { actor } and the audit log is listed", async () => {
    await Object.assign(app.soniq.deadLetter, {
      replay: async (id: string, options: unknown) => {
        calls.push(["deadLetter.replay", id, options]);
        return "replayed-id";
      },
    });
    const res = await call(handler, `/api/dead-letters/${app.dead[0]}/replay`, w);
    expect(await json(res)).toEqual({ replayed: true, jobId: "replayed-id" });
    expect(calls).toContainEqual(["deadLetter.replay", app.dead[0], { actor: "dashboard:ops" }]);
    const audit = await json<{ entries: { action: string }[] }>(
      await call(handler, "/api/audit?limit=10&action=dead_letter.replay&since=1h", { key: WRITE_KEY }),
    );
    expect(audit.entries[0]?.action).toBe("dead_letter.replay");
    expect(calls.find((c) => c[0] === "audit.list")?.[1]).toMatchObject({
      limit: 10,
      action: "dead_letter.replay",
    });
  });

  it("features/schedules: list, detail with next fires and history, trigger returns the job id", async () => {
    expect(
      (await json<{ schedules: unknown[] }>(await call(handler, "/api/schedules", { key: WRITE_KEY })))
        .schedules,
    ).toHaveLength(1);
    const detail = await json<{ upcoming: unknown[]; history: { outcome: string }[] }>(
      await call(handler, "/api/schedules/reports.daily", { key: WRITE_KEY }),
    );
    expect(detail.upcoming).toHaveLength(1);
    expect(detail.history[0]?.outcome).toBe("fired");
    expect((await call(handler, "/api/schedules/nope.none", { key: WRITE_KEY })).status).toBe(404);
    expect(await json(await call(handler, "/api/schedules/reports.daily/trigger", w))).toMatchObject({
      jobId: "new-job-id",
    });
    expect(calls).toContainEqual(["schedules.trigger", "reports.daily", { actor: "dashboard:ops" }]);
  });

  it("features/replica-lag: the overview says reads come from a replica and how far behind, only then", async () => {
    const { login } = await import("./support.js");
    const { cookie } = await login(handler, WRITE_KEY);
    const page = async () => (await call(handler, "/", { cookie })).text();
    expect(await page()).not.toContain("Read from a replica");
    Object.assign(app.soniq, { replication: async () => ({ readReplica: true, lagMs: 2500 }) });
    expect(await page()).toContain("Read from a replica, 2.5 s behind the primary.");
  });

  it("features/pages: overview charts, queues, schedules and audit pages render the data", async () => {
    const { login } = await import("./support.js");
    const { cookie } = await login(handler, WRITE_KEY);
    const overview = await (await call(handler, "/?range=24h", { cookie })).text();
    expect(overview).toContain('data-chart="Throughput (done)"');
    expect(overview).not.toContain("not available");
    for (const [path, text] of [
      ["/queues", "Resume"],
      ["/queues", `data-configure="/api/queues/default/configure"`],
      ["/schedules", "reports.daily"],
      ["/schedules/reports.daily", "Trigger now"],
      ["/audit", "dead_letter.replay"],
      [`/jobs/${app.retrying[0]}`, "retry_backoff"],
    ] as const) {
      const res = await call(handler, path, { cookie });
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain(text);
    }
  });
});
