/** The read routes on the memory backend: shapes, filters, search, cursor pages, validation. */

import { memoryBackend } from "@soniq/backend-memory";
import type { Job } from "@soniq/core";
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, handlerFor, json, type Seeded, seededApp } from "./support.js";

let app: Seeded;
let handler: ReturnType<typeof handlerFor>;

beforeAll(async () => {
  app = await seededApp();
  handler = handlerFor(app.soniq);
});
afterAll(() => app.soniq.close());

describe("GET /api/stats", () => {
  it("api/stats-six-keys: answers core's six counters", async () => {
    const res = await call(handler, "/api/stats");
    expect(res.status).toBe(200);
    const body = await json<{ stats: Record<string, number> }>(res);
    expect(body.stats).toEqual(await app.soniq.jobs.stats());
    expect(Object.keys(body.stats).sort()).toEqual([
      "cancelled",
      "dead_letter",
      "done",
      "processing",
      "queued",
      "total",
    ]);
    expect(body.stats.dead_letter).toBe(3);
  });
});

describe("GET /api/jobs", () => {
  const ids = async (path: string) =>
    (await json<{ jobs: Job[] }>(await call(handler, path))).jobs.map((j) => j.id);

  it("api/jobs-filters: status, queue and name narrow the list", async () => {
    expect((await ids("/api/jobs?status=done&limit=1000")).sort()).toEqual([...app.done].sort());
    expect((await ids("/api/jobs?queue=reports")).sort()).toEqual([...app.reports].sort());
    expect(await ids("/api/jobs?name=billing.charge")).toEqual(app.retrying);
    expect((await ids("/api/jobs?status=queued,processing")).sort()).toEqual(
      [...app.retrying, ...app.reports].sort(),
    );
  });

  it("api/jobs-search: q finds an exact id, a name fragment and error text", async () => {
    expect(await ids(`/api/jobs?q=${app.done[3]}`)).toEqual([app.done[3]]);
    expect((await ids("/api/jobs?q=reports.bu")).sort()).toEqual([...app.reports].sort());
    expect(await ids("/api/jobs?q=GATEWAY%20timeout")).toEqual(app.retrying);
    expect(await ids("/api/jobs?q=nothing-like-this")).toEqual([]);
  });

  it("api/jobs-cursor: pages cover every job once, also when jobs arrive between pages", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { jobs: Job[]; nextCursor: string | null } = await json(
        await call(handler, `/api/jobs?limit=4${cursor ? `&cursor=${cursor}` : ""}`),
      );
      seen.push(...page.jobs.map((j) => j.id));
      cursor = page.nextCursor;
      if (pages === 0)
        await app.soniq.jobs
          .enqueue("reports.build", {}, { queue: "reports" })
          .then((r) => app.reports.push(r.id));
      pages++;
    } while (cursor && pages < 20);
    const all = [...app.done, ...app.retrying, ...app.reports.slice(0, 2)];
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual(all.sort());
  });

  it("api/jobs-previous: prevCursor pages back to the same rows; the first page has none", async () => {
    type JobsPage = { jobs: Job[]; nextCursor: string | null; prevCursor: string | null };
    const page = (cursor: string | null) =>
      call(handler, `/api/jobs?limit=3${cursor ? `&cursor=${cursor}` : ""}`).then((r) => json<JobsPage>(r));
    const first = await page(null);
    expect(first.prevCursor).toBeNull();
    const second = await page(first.nextCursor);
    const third = await page(second.nextCursor);
    const back = await page(third.prevCursor);
    expect(back.jobs.map((j) => j.id)).toEqual(second.jobs.map((j) => j.id));
    const top = await page(back.prevCursor);
    expect(top.jobs.map((j) => j.id)).toEqual(first.jobs.map((j) => j.id));
    expect(top.prevCursor).toBeNull();
    const deadPage = (cursor: string | null) =>
      call(handler, `/api/dead-letters?limit=1${cursor ? `&cursor=${cursor}` : ""}`).then((r) =>
        json<{ deadLetters: { id: string }[]; nextCursor: string | null; prevCursor: string | null }>(r),
      );
    const d1 = await deadPage(null);
    const d2 = await deadPage(d1.nextCursor);
    expect((await deadPage(d2.prevCursor)).deadLetters.map((d) => d.id)).toEqual(
      d1.deadLetters.map((d) => d.id),
    );
  });

  it("api/jobs-limit: capped at 1000, malformed limits and cursors are 400", async () => {
    expect((await call(handler, "/api/jobs?limit=5000")).status).toBe(200);
    for (const bad of [
      "limit=0",
      "limit=-1",
      "limit=abc",
      "limit=1.5",
      "cursor=%%%",
      "cursor=eyJvIjotMX0",
      `cursor=${Buffer.from(JSON.stringify({ d: "older", t: 1, i: "not-an-id" })).toString("base64url")}`,
      `cursor=${Buffer.from(JSON.stringify({ d: "up", t: 1, i: "00000000-0000-4000-8000-000000000000" })).toString("base64url")}`,
      "status=bogus",
      "status=dead_letter",
      "name=Not%20A%20Name",
      "queue=UPPER",
    ]) {
      const res = await call(handler, `/api/jobs?${bad}`);
      expect(res.status, bad).toBe(400);
      expect((await json<{ error: { code: string } }>(res)).error.code).toBe("bad_request");
    }
  });
});

describe("GET /api/jobs/:id", () => {
  it("api/job-detail: the job and core's explain verdict", async () => {
    const res = await call(handler, `/api/jobs/${app.retrying[0]}`);
    const body = await json<{
      job: Job;
      explain: { status: string; verdict: string; reasons: { code: string }[] };
    }>(res);
    expect(res.status).toBe(200);
    expect(body.job.lastError).toContain("gateway timeout");
    expect(body.job.attempts).toBe(1);
    const explained = JSON.parse(JSON.stringify(await app.soniq.jobs.explain(app.retrying[0] as string)));
    expect(body.explain).toEqual(explained);
    expect(body.explain).toMatchObject({ status: "queued", verdict: "blocked" });
    expect(body.explain.reasons.map((r) => r.code)).toContain("retry_backoff");
  });

  it("api/job-detail-args-version: the job's argsVersion, its definition's or a producer's; null when unversioned", async () => {
    const detail = async (h: ReturnType<typeof handlerFor>, id: string) =>
      (await json<{ job: Job }>(await call(h, `/api/jobs/${id}`))).job;
    expect((await detail(handler, app.retrying[0] as string)).argsVersion).toBe(1); // the definition's default
    const producer = new Soniq({ backend: memoryBackend(), allowUnknownJobNames: true });
    try {
      const versioned = await producer.jobs.enqueue("legacy.sync", { n: 1 }, { version: 4 });
      const plain = await producer.jobs.enqueue("legacy.sync", { n: 2 });
      const h = handlerFor(producer);
      expect(await detail(h, versioned.id)).toMatchObject({ id: versioned.id, argsVersion: 4 });
      expect(await detail(h, plain.id)).toMatchObject({ id: plain.id, argsVersion: null });
    } finally {
      await producer.close();
    }
  });

  it("api/job-detail-404: unknown, malformed and dead-lettered ids are 404", async () => {
    for (const id of [
      "00000000-0000-0000-0000-000000000000",
      "not-a-uuid",
      "..%2F..%2Fetc",
      "%3Cscript%3E",
      "x".repeat(300),
      app.dead[0],
    ]) {
      const res = await call(handler, `/api/jobs/${id}`);
      expect(res.status, id).toBe(404);
    }
  });
});

describe("GET /api/dead-letters", () => {
  it("api/dead-letters-filters: reason, name, search and time window", async () => {
    const list = async (q: string) =>
      (
        await json<{ deadLetters: { id: string }[] }>(await call(handler, `/api/dead-letters?${q}`))
      ).deadLetters.map((d) => d.id);
    expect((await list("reason=permanent_failure")).sort()).toEqual([...app.dead].sort());
    expect(await list("reason=job_not_found")).toEqual([]);
    expect((await list("name=billing.charge&since=1h")).sort()).toEqual([...app.dead].sort());
    expect(await list("q=declined%20for%20-2")).toEqual([app.dead[1]]);
    expect(await list("until=2000-01-01")).toEqual([]);
    expect((await call(handler, "/api/dead-letters?since=yesterday")).status).toBe(400);
    expect((await call(handler, "/api/dead-letters?since=2h&until=3h")).status).toBe(400);
  });

  it("api/dead-letter-detail: one row by id, 404 otherwise", async () => {
    const res = await call(handler, `/api/dead-letters/${app.dead[0]}`);
    expect(res.status).toBe(200);
    const body = await json<{
      deadLetter: { deadLetterReason: string; lastError: string; argsVersion: number | null };
    }>(res);
    expect(body.deadLetter.deadLetterReason).toBe("permanent_failure");
    expect(body.deadLetter.argsVersion).toBe(1); // kept from its job: the definition's default
    expect(body.deadLetter.lastError).toContain("card declined");
    expect((await call(handler, `/api/dead-letters/${app.done[0]}`)).status).toBe(404);
    expect((await call(handler, "/api/dead-letters/bad%20id")).status).toBe(404);
  });
});

describe("GET /api/queues and /api/workers", () => {
  it("api/queues: soniq.queues.list() entries; a paused queue reads as paused", async () => {
    await app.soniq.queues.pause("reports");
    try {
      const body = await json<{ queues: { name: string; paused: boolean; stats: object; lagMs: number }[] }>(
        await call(handler, "/api/queues"),
      );
      expect(body.queues.map((q) => q.name)).toEqual(["default", "reports"]);
      expect(body.queues.find((q) => q.name === "reports")).toMatchObject({
        paused: true,
        stats: await app.soniq.jobs.stats({ queue: "reports" }),
        lagMs: expect.any(Number),
      });
    } finally {
      await app.soniq.queues.resume("reports");
    }
  });

  it("api/workers: soniq.workers.list(), each worker with core's derived state", async () => {
    const stopped = app.soniq.worker({ queues: ["reports"], concurrency: 2 });
    await stopped.start();
    await stopped.stop();
    const worker = app.soniq.worker({ queues: ["reports"], concurrency: 3 });
    await worker.start();
    try {
      const body = await json<{
        workers: { id: string; state: string; concurrency: number; queues: string[] }[];
      }>(await call(handler, "/api/workers"));
      const byId = new Map(body.workers.map((w) => [w.id, w]));
      expect(byId.get(worker.id)).toMatchObject({ state: "live", concurrency: 3, queues: ["reports"] });
      expect(byId.get(stopped.id)).toMatchObject({ state: "stopped", concurrency: 2 });
      expect(body.workers[0]?.state).toBe("live");
      expect(JSON.parse(JSON.stringify(await app.soniq.workers.list()))).toMatchObject(
        body.workers.map((w) => ({ id: w.id, state: w.state })),
      );
    } finally {
      await worker.stop();
    }
  });
});

describe("dashboard({ staleAfterMs })", () => {
  it("api/workers-stale-after: the option is core's threshold; the state is core's rule", async () => {
    // this backend writes heartbeats 10 s in the past
    const soniq = new Soniq({ backend: memoryBackend({ now: () => Date.now() - 10_000 }) });
    try {
      await soniq.backend.workers.register({
        id: "00000000-0000-4000-8000-000000000001",
        hostname: "h",
        pid: 1,
        queues: [],
        concurrency: 1,
        version: null,
        metadata: null,
      });
      const state = async (options: { staleAfterMs?: number }) =>
        (await json<{ workers: { state: string }[] }>(await call(handlerFor(soniq, options), "/api/workers")))
          .workers[0]?.state;
      expect(await state({})).toBe("live");
      expect(await state({ staleAfterMs: 5_000 })).toBe("stale");
      expect(await state({ staleAfterMs: 600_000 })).toBe("live");
    } finally {
      await soniq.close();
    }
  });
});

describe("metrics and the rest", () => {
  it("api/metrics-series: core's metrics.series fills the buckets", async () => {
    const minute = 60_000;
    const at = new Date(Math.floor(Date.now() / minute) * minute - 2 * minute);
    const row = {
      bucketStart: at,
      done: 4,
      failed: 1,
      retried: 0,
      deadLettered: 1,
      snoozed: 0,
      runMsSum: 12,
    };
    await app.soniq.backend.metrics.record([
      { ...row, queue: "default", jobName: "emails.send_welcome" },
      { ...row, queue: "reports", jobName: "reports.build" },
    ]);
    type Series = { since: string; buckets: { at: string; done: number; deadLettered: number }[] };
    const all = await json<Series>(await call(handler, "/api/metrics?since=10m"));
    expect(all.buckets.find((b) => b.at === at.toISOString())).toMatchObject({ done: 8, deadLettered: 2 });
    const one = await json<Series>(await call(handler, "/api/metrics?since=10m&queue=reports"));
    expect(one.buckets.find((b) => b.at === at.toISOString())).toMatchObject({ done: 4 });
    // one bucket per minute from the minute 10 minutes ago to now
    expect(all.buckets.length).toBeGreaterThanOrEqual(10);
    expect(all.buckets.length).toBeLessThanOrEqual(11);
    const starts = all.buckets.map((b) => Date.parse(b.at));
    expect(starts.slice(1).map((t, i) => t - (starts[i] as number))).toEqual(
      starts.slice(1).map(() => minute),
    );
    const doneIn = (points: { done: number }[]) => points.reduce((n, p) => n + p.done, 0);
    const coreAll = await app.soniq.metrics.series({ since: new Date(all.since), bucketMs: minute });
    expect(doneIn(all.buckets)).toBe(doneIn(coreAll)); // core's sums; the buckets it leaves out are zeros
    const quarter = await json<Series & { bucketMs: number }>(
      await call(handler, "/api/metrics?since=1h&bucketMs=15m"),
    );
    expect(quarter.bucketMs).toBe(900_000);
    const coreQuarter = await app.soniq.metrics.series({ since: new Date(quarter.since), bucketMs: 900_000 });
    expect(doneIn(quarter.buckets)).toBe(doneIn(coreQuarter));
    for (const bad of ["bucketMs=90000", "bucketMs=abc", "bucketMs=0", "since=tomorrowish", "since=1000d"]) {
      const res = await call(handler, `/api/metrics?${bad}`);
      expect(res.status, bad).toBe(400);
    }
    const page = await (await call(handler, "/")).text();
    expect(page).toContain("Throughput (done)");
  });

  it("api/unknown-route: a JSON 404", async () => {
    const res = await call(handler, "/api/nope");
    expect(res.status).toBe(404);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe("not_found");
  });
});
