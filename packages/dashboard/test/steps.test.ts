/**
 * Durable steps in the dashboard (DESIGN.md section 19): the step timeline of a job and of a dead letter (API
 * and page, through the app's `redact`), the signal write (`POST /api/jobs/:id/signal`: outcomes, typed errors,
 * scopes and CSRF) and a single replay's step options (`steps`, `resolve`), on the memory backend.
 */
import { memoryBackend } from "@soniq/backend-memory";
import type { JobStep } from "@soniq/core";
import { afterEach, describe, expect, it } from "vitest";
import { bodyShapeFor, REPLAY_BODY, SIGNAL_BODY } from "../src/api/bodies.js";
import { type StepsApp, stepsApp, tokenOf } from "./steps-support.js";
import { call, handlerFor, json, KEYS, login, ORIGIN, READ_KEY, WRITE_KEY } from "./support.js";

const open: StepsApp[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((a) => a.soniq.close()));
});

async function app(options: Parameters<typeof stepsApp>[0] = {}): Promise<StepsApp> {
  const made = await stepsApp(options);
  open.push(made);
  return made;
}

type ErrorBody = { error: { code: string; message: string; soniqCode?: string } };
type ApiStep = Omit<JobStep, "startedAt" | "finishedAt" | "wakeAt"> & {
  startedAt: string | null;
  finishedAt: string | null;
  wakeAt: string | null;
};
const w = { method: "POST", key: WRITE_KEY } as const;

describe("step timeline", () => {
  it("steps/timeline-api: /api/jobs/:id carries the checkpoints in order, values through redact", async () => {
    const a = await app({ redact: ["token", "password"] });
    const h = handlerFor(a.soniq);
    const body = await json<{ steps: ApiStep[] }>(await call(h, `/api/jobs/${a.waiting}`));
    expect(body.steps.map((s) => [s.name, s.kind, s.state, s.attempt])).toEqual([
      ["create_account", "step", "done", 1],
      ["grace_period", "sleep", "done", 1],
      ["approval", "signal", "waiting", 1],
    ]);
    expect(body.steps[0]?.value).toEqual({ accountId: "acc_ann", token: "[redacted]" });
    const approval = body.steps[2] as ApiStep;
    expect(approval.finishedAt).toBeNull();
    expect(Date.parse(approval.wakeAt as string) - Date.parse(approval.startedAt as string)).toBe(
      7 * 86_400_000,
    );
    // the store keeps the real value
    expect((await a.soniq.jobs.steps(a.waiting))[0]?.value).toEqual({
      accountId: "acc_ann",
      token: tokenOf("ann"),
    });
    const plain = await app();
    const unredacted = await json<{ steps: ApiStep[] }>(
      await call(handlerFor(plain.soniq), `/api/jobs/${plain.waiting}`),
    );
    expect(unredacted.steps[0]?.value).toEqual({ accountId: "acc_ann", token: tokenOf("ann") });
  });

  it("steps/timeline-page: the job page draws kind, name, state, attempt, duration, the wake time and the value", async () => {
    const a = await app({ redact: ["token"] });
    const page = await (await call(handlerFor(a.soniq), `/jobs/${a.waiting}`)).text();
    expect(page).toContain('<table data-testid="steps" class="steps">');
    const rows = [
      ...page.matchAll(/<tr data-step-name="([^"]+)" data-kind="([^"]+)" data-state="([^"]+)">/g),
    ];
    expect(rows.map((m) => m.slice(1))).toEqual([
      ["create_account", "step", "done"],
      ["grace_period", "sleep", "done"],
      ["approval", "signal", "waiting"],
    ]);
    expect(page).toContain(
      "<code>{&quot;accountId&quot;:&quot;acc_ann&quot;,&quot;token&quot;:&quot;[redacted]&quot;}</code>",
    );
    expect(page).toMatch(/\(deadline in 7\.0 d\)/);
    expect(page).toMatch(/so far<\/span>/);
    expect(page).not.toContain(tokenOf("ann"));
    // a job without steps says so; explain names the wait
    expect(page).toContain("waiting_for_signal");
  });

  it("steps/dead-letter: the dead letter's timeline (API and page) with the failed step's error, redacted", async () => {
    const a = await app({ redact: ["token", "password"] });
    const h = handlerFor(a.soniq);
    const api = await json<{ deadLetter: { lastError: string }; steps: ApiStep[] }>(
      await call(h, `/api/dead-letters/${a.dead}`),
    );
    expect(api.steps.map((s) => [s.name, s.state])).toEqual([
      ["create_account", "done"],
      ["grace_period", "done"],
      ["approval", "done"],
      ["charge_card", "failed"],
    ]);
    const charge = api.steps[3] as ApiStep;
    expect(charge.error).toMatch(
      /^Error: card declined for acc_bob \(token \[redacted\], password \[redacted\]\)\n\s+at /,
    );
    expect(api.steps[2]?.value).toEqual({ by: "ops@example.com", token: "[redacted]" });
    expect(api.deadLetter.lastError).toContain("(token [redacted], password [redacted])");
    const page = await (await call(h, `/dead-letters/${a.dead}`)).text();
    expect(page).toContain('data-step-name="charge_card" data-kind="step" data-state="failed"');
    expect(page).toContain("card declined for acc_bob (token [redacted], password [redacted])");
    for (const text of [JSON.stringify(api), page]) {
      expect(text).not.toMatch(/tok_bob_live_secret|hunter3|sig_token_secret/);
    }
    // the job's own detail scrubs the same (a job that failed a step and waits for its retry shows it too)
    const jobPage = await (await call(h, `/jobs/${a.done}`)).text();
    expect(jobPage).not.toContain(tokenOf("cat"));
  });

  it("steps/redact-function: a redact function sees step values as field result", async () => {
    const seen = new Set<string>();
    const a = await app({
      redact: (value, { field }) => {
        seen.add(field);
        return field === "result" ? "[hidden result]" : value;
      },
    });
    const h = handlerFor(a.soniq);
    seen.clear();
    const body = await json<{ steps: ApiStep[] }>(await call(h, `/api/jobs/${a.waiting}`));
    expect(body.steps[0]?.value).toBe("[hidden result]");
    expect(seen.has("result")).toBe(true);
    const page = await (await call(h, `/jobs/${a.waiting}`)).text();
    expect(page).toContain("&quot;[hidden result]&quot;");
    expect(page).not.toContain(tokenOf("ann"));
    // what the function hid of a step value is scrubbed from the failed step's error too
    const dead = await json<{ steps: ApiStep[] }>(await call(h, `/api/dead-letters/${a.dead}`));
    expect(dead.steps[3]?.error).toContain(
      "card declined for [redacted] (token [redacted], password hunter3)",
    );
  });

  it("steps/no-steps-backend: a backend without the steps capability shows none and refuses a signal with 409", async () => {
    // a backend declares a capability by having its facet: this one has every memory facet but steps
    const { steps: _steps, ...backend } = memoryBackend();
    const { Soniq } = await import("@soniq/core");
    const soniq = new Soniq({ backend });
    try {
      await soniq.setup();
      soniq.job("reports.build", async () => "ok");
      const { id } = await soniq.jobs.enqueue("reports.build", {});
      const h = handlerFor(soniq, { apiKeys: KEYS });
      const detail = await json<{ steps: unknown }>(await call(h, `/api/jobs/${id}`, { key: READ_KEY }));
      expect(detail.steps).toBeNull();
      const { cookie } = await login(h, WRITE_KEY);
      const page = await (await call(h, `/jobs/${id}`, { cookie })).text();
      expect(page).toContain("keeps no durable steps");
      expect(page).not.toContain('data-testid="signal-form"');
      const res = await call(h, `/api/jobs/${id}/signal`, { ...w, body: { name: "approval" } });
      expect(res.status).toBe(409);
      expect((await json<ErrorBody>(res)).error.soniqCode).toBe("SONIQ_UNSUPPORTED");
    } finally {
      await soniq.close();
    }
  });
});

describe("signal", () => {
  it("steps/signal-body-shapes: the signal and replay routes take their own keys", () => {
    expect(bodyShapeFor("/jobs/abc/signal")).toBe(SIGNAL_BODY);
    expect(bodyShapeFor("/dead-letters/abc/replay")).toBe(REPLAY_BODY);
    expect(bodyShapeFor("/dead-letters/replay-where")).not.toBe(REPLAY_BODY);
  });

  it("steps/signal-stored: a write key's signal wakes the waiting job (200), a resend with its key is a duplicate; audited", async () => {
    const a = await app();
    const h = handlerFor(a.soniq, { apiKeys: KEYS });
    const body = { name: "approval", payload: { by: "ops@example.com" }, key: "ticket-4711" };
    const res = await call(h, `/api/jobs/${a.waiting}/signal`, { ...w, body });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      jobId: a.waiting,
      name: "approval",
      status: "stored",
      woke: true,
      deadLetter: false,
    });
    const again = await call(h, `/api/jobs/${a.waiting}/signal`, { ...w, body });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ status: "duplicate", woke: false });
    const [entry] = await a.soniq.audit.list({ action: "job.signal", limit: 1 });
    expect(entry).toMatchObject({ actor: "dashboard:ops", target: a.waiting });
    await a.soniq.worker().runOnce({ maxJobs: 10 });
    expect(await a.soniq.jobs.get(a.waiting)).toMatchObject({
      status: "done",
      result: { approved: true, by: "ops@example.com" },
    });
  });

  it("steps/signal-buffered: a signal for a name the job does not wait on is stored, not waking it; to a dead letter it waits for the replay", async () => {
    const a = await app();
    const h = handlerFor(a.soniq, { apiKeys: KEYS });
    const later = await call(h, `/api/jobs/${a.waiting}/signal`, { ...w, body: { name: "shipping" } });
    expect(await json(later)).toMatchObject({ status: "stored", woke: false, deadLetter: false });
    const dead = await call(h, `/api/jobs/${a.dead}/signal`, {
      ...w,
      body: { name: "approval", payload: 1 },
    });
    expect(await json(dead)).toMatchObject({ status: "stored", deadLetter: true });
  });

  it("steps/signal-bad-input: 400 with core's code for a bad name or payload; a missing name, unknown key or bad key type too", async () => {
    const a = await app();
    const h = handlerFor(a.soniq, { apiKeys: KEYS });
    const path = `/api/jobs/${a.waiting}/signal`;
    const huge = { blob: "x".repeat(70 * 1024) };
    for (const [body, soniqCode] of [
      [{ name: "approval", payload: huge }, "SONIQ_INVALID_ARGUMENT"],
      [{ name: "Not A Name" }, "SONIQ_INVALID_ARGUMENT"],
      [{ name: "approval", key: "" }, "SONIQ_INVALID_ARGUMENT"],
      [{ payload: 1 }, undefined],
      [{ name: "approval", key: 7 }, undefined],
      [{ name: "approval", payloud: 1 }, undefined],
      ["not json", undefined],
    ] as const) {
      const res = await call(h, path, { ...w, body });
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      const error = (await json<ErrorBody>(res)).error;
      expect(error.code).toBe("bad_request");
      expect(error.soniqCode).toBe(soniqCode);
    }
    // nothing was stored: the job still waits
    expect((await a.soniq.jobs.steps(a.waiting))[2]?.state).toBe("waiting");
  });

  it("steps/signal-finished-or-unknown: a done job is 409, an unknown id 404, each with core's code", async () => {
    const a = await app();
    const h = handlerFor(a.soniq, { apiKeys: KEYS });
    const done = await call(h, `/api/jobs/${a.done}/signal`, { ...w, body: { name: "approval" } });
    expect(done.status).toBe(409);
    expect((await json<ErrorBody>(done)).error).toMatchObject({
      code: "conflict",
      soniqCode: "SONIQ_JOB_FINISHED",
    });
    const unknown = "01a00000-0000-7000-8000-000000000000";
    const missing = await call(h, `/api/jobs/${unknown}/signal`, { ...w, body: { name: "approval" } });
    expect(missing.status).toBe(404);
    expect((await json<ErrorBody>(missing)).error).toMatchObject({
      code: "not_found",
      soniqCode: "SONIQ_JOB_NOT_FOUND",
    });
    expect((await call(h, "/api/jobs/a%20b/signal", { ...w, body: { name: "approval" } })).status).toBe(404);
  });

  it("steps/signal-scopes: a read key, no keys and a session without its CSRF token are refused; the session with it is not", async () => {
    const a = await app();
    const keyed = handlerFor(a.soniq, { apiKeys: KEYS });
    const path = `/api/jobs/${a.waiting}/signal`;
    const body = { name: "approval", payload: { by: "x" } };
    const read = await call(keyed, path, { method: "POST", key: READ_KEY, body });
    expect(read.status).toBe(403);
    expect((await json<ErrorBody>(read)).error.code).toBe("forbidden");
    const openRes = await call(handlerFor(a.soniq), path, { method: "POST", body });
    expect((await json<ErrorBody>(openRes)).error.code).toBe("writes_disabled");
    const { cookie, csrf } = await login(keyed, WRITE_KEY);
    const noToken = await call(keyed, path, { method: "POST", cookie, origin: ORIGIN, body });
    expect((await json<ErrorBody>(noToken)).error.code).toBe("csrf");
    const foreign = await call(keyed, path, { ...w, origin: "http://evil.test", body });
    expect(foreign.status).toBe(403);
    expect((await a.soniq.jobs.steps(a.waiting))[2]?.state).toBe("waiting");
    const ok = await call(keyed, path, {
      method: "POST",
      cookie,
      origin: ORIGIN,
      headers: { "x-csrf-token": csrf },
      body,
    });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ status: "stored", woke: true });
  });

  it("steps/signal-form: shown to a write session on a queued job, with the waited name; not to a read key nor on a done job", async () => {
    const a = await app();
    const keyed = handlerFor(a.soniq, { apiKeys: KEYS });
    const writer = await login(keyed, WRITE_KEY);
    const page = await (await call(keyed, `/jobs/${a.waiting}`, { cookie: writer.cookie })).text();
    expect(page).toContain(`data-post="/api/jobs/${a.waiting}/signal" data-outcome="signal"`);
    expect(page).toContain('<input name="name" value="approval"');
    const reader = await login(keyed, READ_KEY);
    const readPage = await (await call(keyed, `/jobs/${a.waiting}`, { cookie: reader.cookie })).text();
    expect(readPage).not.toContain('data-testid="signal-form"');
    expect(readPage).toContain("Your key is read-only.");
    const donePage = await (await call(keyed, `/jobs/${a.done}`, { cookie: writer.cookie })).text();
    expect(donePage).not.toContain('data-testid="signal-form"');
    expect(donePage).toContain('data-step-name="charge_card"');
  });
});

describe("replay options", () => {
  it("steps/replay-resolve: keep the done steps, record the failed one with the operator's value; the replay finishes", async () => {
    const a = await app({ redact: ["paymentId"] });
    const h = handlerFor(a.soniq, { apiKeys: KEYS });
    const res = await call(h, `/api/dead-letters/${a.dead}/replay`, {
      ...w,
      body: { steps: "keep", resolve: { charge_card: { paymentId: "manual-1" } } },
    });
    expect(res.status).toBe(200);
    const { jobId } = await json<{ replayed: true; jobId: string }>(res);
    const steps = await a.soniq.jobs.steps(jobId);
    expect(steps.map((s) => [s.name, s.state, s.attempt])).toEqual([
      ["create_account", "done", 1],
      ["grace_period", "done", 1],
      ["approval", "done", 1],
      ["charge_card", "done", 0],
    ]);
    const [entry] = await a.soniq.audit.list({ action: "dead_letter.replay", limit: 1 });
    expect(entry).toMatchObject({
      actor: "dashboard:ops",
      params: { steps: "keep", resolve: { charge_card: { paymentId: "[redacted]" } } },
    });
    // the resolved step reads as "resolved" on the new job's page, its value redacted
    const page = await (await call(h, `/api/jobs/${jobId}`, { key: READ_KEY })).text();
    expect(page).not.toContain("manual-1");
    await a.soniq.worker().runOnce({ maxJobs: 10 });
    expect((await a.soniq.jobs.get(jobId))?.result).toMatchObject({
      approved: true,
      payment: { paymentId: "manual-1" },
    });
  });

  it("steps/replay-discard: discard starts clean (the new job waits for its approval again)", async () => {
    const a = await app();
    const h = handlerFor(a.soniq, { apiKeys: KEYS });
    const res = await call(h, `/api/dead-letters/${a.dead}/replay`, { ...w, body: { steps: "discard" } });
    const { jobId } = await json<{ jobId: string }>(res);
    expect(await a.soniq.jobs.steps(jobId)).toEqual([]);
    await a.soniq.worker().runOnce({ maxJobs: 10 });
    expect((await a.soniq.jobs.steps(jobId)).map((s) => [s.name, s.state])).toEqual([
      ["create_account", "done"],
      ["grace_period", "done"],
      ["approval", "waiting"],
    ]);
    const [entry] = await a.soniq.audit.list({ action: "dead_letter.replay", limit: 1 });
    expect(entry?.params).toMatchObject({ steps: "discard" });
  });

  it("steps/replay-bad-options: a bad mode, a resolve that is not an object or names no step, and unknown keys are 400; nothing replayed", async () => {
    const a = await app();
    const h = handlerFor(a.soniq, { apiKeys: KEYS });
    for (const body of [
      { steps: "maybe" },
      { resolve: [] },
      { resolve: "charge_card" },
      { resolve: { "Not A Step": 1 } },
      { steps: "keep", queue: "other" },
    ]) {
      const res = await call(h, `/api/dead-letters/${a.dead}/replay`, { ...w, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await a.soniq.deadLetters.get(a.dead))?.resurrectionCount).toBe(0);
  });

  it("steps/replay-form: the dead letter's page offers keep or discard and resolve, for a write session", async () => {
    const a = await app();
    const keyed = handlerFor(a.soniq, { apiKeys: KEYS });
    const { cookie } = await login(keyed, WRITE_KEY);
    const page = await (await call(keyed, `/dead-letters/${a.dead}`, { cookie })).text();
    expect(page).toContain(`data-post="/api/dead-letters/${a.dead}/replay" data-redirect="job"`);
    expect(page).toContain('<input type="radio" name="steps" value="keep" checked>');
    expect(page).toContain('<input type="radio" name="steps" value="discard">');
    expect(page).toContain('<textarea name="resolve" data-json');
    expect(page).toContain("{ &quot;charge_card&quot;: ");
  });
});
