/** Writes and refusals: read-only without keys, bearer and session keys, scopes, CSRF, bulk actions. */
import { memoryBackend } from "@soniq/backend-memory";
import { PermanentError, Soniq } from "@soniq/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  call,
  handlerFor,
  json,
  KEYS,
  login,
  ORIGIN,
  READ_KEY,
  type Seeded,
  seededApp,
  WRITE_KEY,
} from "./support.js";

let app: Seeded;
let open: ReturnType<typeof handlerFor>;
let keyed: ReturnType<typeof handlerFor>;

beforeEach(async () => {
  app = await seededApp();
  open = handlerFor(app.soniq);
  keyed = handlerFor(app.soniq, { apiKeys: KEYS });
});
afterEach(() => app.soniq.close());

type ErrorBody = { error: { code: string; message: string } };

const WRITES = (a: Seeded): string[] => [
  `/api/jobs/${a.reports[0]}/cancel`,
  `/api/dead-letters/${a.dead[0]}/replay`,
  `/api/dead-letters/${a.dead[0]}/purge`,
  "/api/dead-letters/replay-where",
  "/api/dead-letters/purge-where",
  "/api/queues/default/pause",
  "/api/schedules/reports.daily/trigger",
];

describe("without API keys", () => {
  it("auth/open-read-only: every write is 403 and says how to enable writes; nothing changes", async () => {
    for (const path of WRITES(app)) {
      const res = await call(open, path, { method: "POST", body: {} });
      expect(res.status, path).toBe(403);
      const body = await json<ErrorBody>(res);
      expect(body.error.code).toBe("writes_disabled");
      expect(body.error.message).toContain("apiKeys");
    }
    expect((await app.soniq.jobs.get(app.reports[0] as string))?.status).toBe("queued");
    expect(await app.soniq.deadLetters.get(app.dead[0] as string)).not.toBeNull();
  });
});

describe("with API keys", () => {
  it("auth/key-required: reads need a key; a wrong key is 401", async () => {
    expect((await call(keyed, "/api/stats")).status).toBe(401);
    const wrong = await call(keyed, "/api/stats", { key: "not-the-key-0123456789" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toContain("Bearer");
    expect((await call(keyed, "/api/stats", { headers: { authorization: "Basic abc" } })).status).toBe(401);
    expect((await call(keyed, "/api/stats", { key: READ_KEY })).status).toBe(200);
    expect((await call(keyed, "/api/stats", { key: WRITE_KEY })).status).toBe(200);
  });

  it("auth/pages-need-login: pages redirect to the login form", async () => {
    const res = await call(keyed, "/jobs?status=done");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/login?next=${encodeURIComponent("/jobs?status=done")}`);
    expect((await call(keyed, "/login")).status).toBe(200);
  });

  it("auth/read-scope: a read key cannot write", async () => {
    const res = await call(keyed, `/api/jobs/${app.reports[0]}/cancel`, { method: "POST", key: READ_KEY });
    expect(res.status).toBe(403);
    expect((await json<ErrorBody>(res)).error.code).toBe("forbidden");
    expect((await app.soniq.jobs.get(app.reports[0] as string))?.status).toBe("queued");
  });

  it("auth/bearer-origin: a bearer write with a foreign Origin is refused, with its own origin accepted", async () => {
    const path = `/api/jobs/${app.reports[0]}/cancel`;
    const foreign = await call(keyed, path, {
      method: "POST",
      key: WRITE_KEY,
      origin: "https://evil.example",
    });
    expect(foreign.status).toBe(403);
    expect((await json<ErrorBody>(foreign)).error.code).toBe("csrf");
    expect((await app.soniq.jobs.get(app.reports[0] as string))?.status).toBe("queued");
    const own = await call(keyed, path, { method: "POST", key: WRITE_KEY, origin: ORIGIN });
    expect(own.status).toBe(200);
    expect((await json<{ cancelled: boolean }>(own)).cancelled).toBe(true);
  });

  it("auth/session-csrf: a session write needs the token and the same origin", async () => {
    const { cookie, csrf } = await login(keyed, WRITE_KEY);
    expect(csrf.length).toBeGreaterThan(20);
    expect((await call(keyed, "/api/stats", { cookie })).status).toBe(200);
    const path = `/api/jobs/${app.reports[0]}/cancel`;
    const noToken = await call(keyed, path, { method: "POST", cookie, origin: ORIGIN });
    expect(noToken.status).toBe(403);
    expect((await json<ErrorBody>(noToken)).error.code).toBe("csrf");
    const wrongToken = await call(keyed, path, {
      method: "POST",
      cookie,
      origin: ORIGIN,
      headers: { "x-csrf-token": "nope" },
    });
    expect(wrongToken.status).toBe(403);
    const noOrigin = await call(keyed, path, { method: "POST", cookie, headers: { "x-csrf-token": csrf } });
    expect(noOrigin.status).toBe(403);
    const foreign = await call(keyed, path, {
      method: "POST",
      cookie,
      origin: "https://evil.example",
      headers: { "x-csrf-token": csrf },
    });
    expect(foreign.status).toBe(403);
    expect((await app.soniq.jobs.get(app.reports[0] as string))?.status).toBe("queued");
    const ok = await call(keyed, path, {
      method: "POST",
      cookie,
      origin: ORIGIN,
      headers: { "x-csrf-token": csrf },
    });
    expect(ok.status).toBe(200);
    expect((await app.soniq.jobs.get(app.reports[0] as string))?.status).toBe("cancelled");
  });

  it("auth/login-logout: a wrong key is refused; logout ends the session", async () => {
    const bad = await call(keyed, "/login", {
      method: "POST",
      body: new URLSearchParams({ key: "wrong-key-0123456789abc" }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("set-cookie")).toBeNull();
    const { cookie } = await login(keyed, READ_KEY);
    const out = await call(keyed, "/logout", { method: "POST", cookie, origin: ORIGIN });
    expect(out.status).toBe(303);
    expect((await call(keyed, "/api/stats", { cookie })).status).toBe(401);
  });

  it("auth/cookie-flags: the session cookie is HttpOnly and SameSite=Strict", async () => {
    const res = await call(keyed, "/login", {
      method: "POST",
      body: new URLSearchParams({ key: WRITE_KEY, next: "https://evil.example/" }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);
    expect(res.headers.get("location")).toBe("/");
  });
});

describe("write routes", () => {
  const w = { method: "POST", key: WRITE_KEY } as const;

  it("write/cancel: cancels a queued job; 409 when finished, 404 when unknown", async () => {
    const res = await call(keyed, `/api/jobs/${app.reports[0]}/cancel`, w);
    expect(res.status).toBe(200);
    expect((await json<{ job: { status: string } }>(res)).job.status).toBe("cancelled");
    expect((await call(keyed, `/api/jobs/${app.reports[0]}/cancel`, w)).status).toBe(409);
    expect((await call(keyed, `/api/jobs/${app.done[0]}/cancel`, w)).status).toBe(409);
    expect((await call(keyed, "/api/jobs/00000000-0000-0000-0000-000000000000/cancel", w)).status).toBe(404);
    expect((await call(keyed, "/api/jobs/bad%20id/cancel", w)).status).toBe(404);
  });

  it("write/replay: mints a queued job and keeps the dead-letter row", async () => {
    const res = await call(keyed, `/api/dead-letters/${app.dead[0]}/replay`, w);
    expect(res.status).toBe(200);
    const { jobId } = await json<{ jobId: string }>(res);
    const job = await app.soniq.jobs.get(jobId);
    expect(job).toMatchObject({
      status: "queued",
      attempts: 0,
      jobName: "billing.charge",
      args: { cents: -1 },
    });
    expect((await app.soniq.deadLetters.get(app.dead[0] as string))?.resurrectionCount).toBe(1);
    expect(
      (await call(keyed, "/api/dead-letters/00000000-0000-0000-0000-000000000000/replay", w)).status,
    ).toBe(404);
  });

  it("write/purge: deletes the row; a second purge is 404", async () => {
    expect((await call(keyed, `/api/dead-letters/${app.dead[0]}/purge`, w)).status).toBe(200);
    expect(await app.soniq.deadLetters.get(app.dead[0] as string)).toBeNull();
    expect((await call(keyed, `/api/dead-letters/${app.dead[0]}/purge`, w)).status).toBe(404);
  });

  it("write/replay-where: a dry run counts and changes nothing; the real run replays every match", async () => {
    const dry = await call(keyed, "/api/dead-letters/replay-where", {
      ...w,
      body: { filter: { name: "billing.charge" }, dryRun: true },
    });
    expect(await json(dry)).toMatchObject({ action: "replay", dryRun: true, count: 3 });
    expect((await app.soniq.jobs.stats()).queued).toBe(3);
    // Every dead letter here is a billing.charge: the filter narrows nothing, so the run says all: true.
    const run = await call(keyed, "/api/dead-letters/replay-where", {
      ...w,
      body: { filter: { name: "billing.charge" }, all: true },
    });
    expect(await json(run)).toEqual({ action: "replay", dryRun: false, count: 3, refused: 0 });
    expect((await app.soniq.jobs.list({ status: "queued", jobName: "billing.charge" })).length).toBe(4);
  });

  it("write/purge-where: by selected ids and by text, each one core call with one purge_where audit row", async () => {
    const gone = "00000000-0000-7000-8000-000000000000";
    const dry = await call(keyed, "/api/dead-letters/purge-where", {
      ...w,
      body: { ids: [app.dead[0], gone], dryRun: true },
    });
    expect(await json(dry)).toEqual({ action: "purge", dryRun: true, count: 1, refused: 0, notFound: 1 });
    const byIds = await call(keyed, "/api/dead-letters/purge-where", {
      ...w,
      body: { ids: [app.dead[0], gone.toUpperCase(), gone], dryRun: false },
    });
    // The id no dead letter has is not acted on: counted as not found, not a failure.
    expect(await json(byIds)).toEqual({ action: "purge", dryRun: false, count: 1, refused: 0, notFound: 1 });
    const byText = await call(keyed, "/api/dead-letters/purge-where", {
      ...w,
      body: { filter: { q: "declined for -2" } },
    });
    expect(await json(byText)).toEqual({ action: "purge", dryRun: false, count: 1, refused: 0 });
    expect((await app.soniq.deadLetters.list()).map((d) => d.id)).toEqual([app.dead[2]]);
    const audit = await app.soniq.audit.list({ action: "dead_letter.purge_where" });
    expect(audit.map((a) => [a.outcome, a.details, a.actor])).toEqual([
      ["ok", { count: 1 }, "dashboard:ops"],
      ["ok", { count: 1 }, "dashboard:ops"],
      ["dry_run", { count: 1 }, "dashboard:ops"],
    ]);
    expect(audit[1]?.params).toMatchObject({ ids: [app.dead[0], gone] });
    expect(await app.soniq.audit.list({ action: "dead_letter.purge" })).toEqual([]);
  });

  it("write/replay-where-refused: a selected row enqueue refuses stays and is counted as refused, not failed", async () => {
    const soniq = new Soniq({ backend: memoryBackend() });
    try {
      await soniq.setup();
      // A schema that starts refusing args it took before: their replays fail enqueue's check.
      let refuse = false;
      const schema = {
        "~standard": {
          version: 1 as const,
          vendor: "test",
          validate: (value: unknown) =>
            refuse && (value as { i: number }).i === 1
              ? { issues: [{ message: "i must not be 1" }] }
              : { value },
        },
      };
      const fail = soniq.job(
        "strict.job",
        async () => {
          throw new PermanentError("no");
        },
        { schema },
      );
      const ids = [(await fail.enqueue({ i: 1 })).id, (await fail.enqueue({ i: 2 })).id];
      await soniq.worker().runOnce({ maxJobs: 2 });
      refuse = true;
      const res = await call(handlerFor(soniq, { apiKeys: KEYS }), "/api/dead-letters/replay-where", {
        ...w,
        body: { ids },
      });
      expect(await json(res)).toEqual({ action: "replay", dryRun: false, count: 1, refused: 1, notFound: 0 });
      expect((await soniq.deadLetters.get(ids[0] as string))?.resurrectionCount).toBe(0);
      expect((await soniq.deadLetters.get(ids[1] as string))?.resurrectionCount).toBe(1);
      const [audit] = await soniq.audit.list({ action: "dead_letter.replay_where" });
      expect(audit?.details).toEqual({ count: 1, refused: 1 });
    } finally {
      await soniq.close();
    }
  });

  it("write/bad-bodies: malformed bodies are 400 and change nothing", async () => {
    const bodies = [
      "{not json",
      "[1,2]",
      { filter: "queue=default" },
      { filter: { colour: "red" } },
      { filter: { since: "last tuesday" } },
      { filter: { queue: 5 } },
      { dryRun: "yes" },
      { ids: [] },
      { ids: ["ok", "bad id"] },
      { ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) },
    ];
    for (const body of bodies) {
      const res = await call(keyed, "/api/dead-letters/purge-where", { ...w, body });
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
    }
    expect((await app.soniq.jobs.stats()).dead_letter).toBe(3);
  });

  it("write/queue-configure: the body goes to soniq.queues.configure as is; core's refusals are 400 and change nothing", async () => {
    const configure = (body: unknown) => call(keyed, "/api/queues/default/configure", { ...w, body });
    const res = await configure({ concurrency: 2_147_483_647, rateLimit: { max: 5, perMs: 1000 } });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ ok: true, queue: "default", action: "configure" });
    const set = await app.soniq.queues.get("default");
    expect(set).toMatchObject({ concurrency: 2_147_483_647, rateLimit: { max: 5, perMs: 1000 } });
    const [audit] = await app.soniq.audit.list({ action: "queue.configure" });
    expect(audit).toMatchObject({ actor: "dashboard:ops", target: "default" });
    for (const body of [
      { concurrency: 0 },
      { concurrency: 2_147_483_648 },
      { concurrency: 1.5 },
      { groupConcurrency: "3" },
      { rateLimit: { max: 5 } },
      {},
    ]) {
      const refused = await configure(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      const error = (await json<ErrorBody>(refused)).error;
      expect(error.code).toBe("bad_request");
      expect(error.message, JSON.stringify(body)).toMatch(/^queues\.configure\(config\)/);
    }
    // keys no route takes are refused by the strict body check before core is called
    for (const body of [{ rateLimit: { max: 5, perMs: 1000, burst: 2 } }, { limit: 3 }]) {
      const refused = await configure(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect((await json<ErrorBody>(refused)).error.message).toMatch(/^Unknown key in the request body/);
    }
    expect(await app.soniq.queues.get("default")).toEqual(set);
    expect(await app.soniq.audit.list({ action: "queue.configure" })).toHaveLength(1);
    await app.soniq.queues.configure("default", { concurrency: null, rateLimit: null });
  });

  it("write/queue-pause: with core's soniq.queues a write key pauses and resumes a queue, audited", async () => {
    const res = await call(keyed, "/api/queues/default/pause", { ...w, body: {} });
    expect(res.status).toBe(200);
    expect((await app.soniq.queues.get("default")).paused).toBe(true);
    const audit = await app.soniq.audit.list({ action: "queue.pause" });
    expect(audit[0]?.target).toBe("default");
    expect((await call(keyed, "/api/queues/default/resume", { ...w, body: {} })).status).toBe(200);
    expect((await app.soniq.queues.get("default")).paused).toBe(false);
  });

  it("write/queue-unknown-refused: pause, resume or configure of a queue nothing knows is 404 and writes nothing, unless ?create=true", async () => {
    for (const action of ["pause", "resume", "configure"]) {
      const sent = action === "configure" ? { concurrency: 2 } : {};
      const res = await call(keyed, `/api/queues/nosuchqueue/${action}`, { ...w, body: sent });
      expect(res.status, action).toBe(404);
      const body = await json<ErrorBody>(res);
      expect(body.error.code).toBe("not_found");
      expect(body.error.message).toMatch(/no queue named "nosuchqueue".*create/);
    }
    expect((await app.soniq.queues.list()).map((q) => q.name)).not.toContain("nosuchqueue");
    expect(await app.soniq.audit.list({ action: "queue.pause" })).toEqual([]);
    const bad = await call(keyed, "/api/queues/nosuchqueue/pause?create=yes", { ...w, body: {} });
    expect(bad.status).toBe(400);
    const created = await call(keyed, "/api/queues/fresh/pause?create=true", { ...w, body: {} });
    expect(created.status).toBe(200);
    expect((await app.soniq.queues.get("fresh")).paused).toBe(true);
  });
});
