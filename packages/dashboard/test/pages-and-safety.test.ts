/** Pages render and escape; options are validated; the server binds to 127.0.0.1; no bad input is a 5xx. */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { memoryBackend } from "@soniq/backend-memory";
import { isSoniqError, Soniq } from "@soniq/core";
import { shortId } from "@soniq/core/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboard, nodeListener, serveDashboard } from "../src/index.js";
import { call, handlerFor, json, KEYS, login, type Seeded, seededApp, WRITE_KEY } from "./support.js";

let app: Seeded;
let handler: ReturnType<typeof handlerFor>;
let evilId: string;
const EVIL = `<script>alert("x")</script><img src=x onerror=alert(1)>`;

beforeAll(async () => {
  app = await seededApp();
  await app.soniq.jobs
    .enqueue("reports.build", { title: EVIL }, { queue: "reports" })
    .then((r) => (evilId = r.id));
  handler = handlerFor(app.soniq);
});
afterAll(() => app.soniq.close());

describe("pages", () => {
  it("pages/all-render: every page answers 200 HTML with the bundled assets only", async () => {
    for (const path of [
      "/",
      "/?range=14d",
      "/jobs",
      "/jobs?status=done&queue=default&name=emails.send_welcome",
      `/jobs/${app.retrying[0]}`,
      "/dead-letters",
      `/dead-letters/${app.dead[0]}`,
      "/workers",
      "/queues",
      "/schedules",
      "/audit",
    ]) {
      const res = await call(handler, path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
      const text = await res.text();
      expect(text).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
    expect((await call(handler, "/assets/app.js")).headers.get("content-type")).toContain("javascript");
    expect((await call(handler, "/assets/app.css")).headers.get("content-type")).toContain("text/css");
  });

  it("pages/core-data-no-notes: every page shows core's data, and none carries a developer note", async () => {
    const worker = app.soniq.worker({ queues: ["idle"], pollIntervalMs: 60_000 });
    await worker.start();
    try {
      const keyed = handlerFor(app.soniq, { apiKeys: KEYS });
      const { cookie } = await login(keyed, WRITE_KEY);
      const pages: [string, string][] = [
        ["/?range=24h", 'data-chart="Throughput (done)"'],
        ["/", "1 live"],
        [
          "/workers",
          `data-worker-id="${worker.id}"><td><code>${shortId(worker.id)}</code></td><td><span class="status live">live</span>`,
        ],
        ["/queues", 'data-configure="/api/queues/default/configure"'],
        [`/jobs/${app.retrying[0]}`, "<code>retry_backoff</code>"],
        ["/schedules", "No schedules stored yet"],
        ["/audit", "No entries."],
      ];
      for (const [path, text] of pages) {
        const res = await call(keyed, path, { cookie });
        expect(res.status, path).toBe(200);
        const page = await res.text();
        expect(page, path).toContain(text);
        for (const note of [
          "not available",
          "Source:",
          "soniq.backend",
          "core has no",
          "this core",
          "Soniq version",
        ]) {
          expect(page, `${path}: ${note}`).not.toContain(note);
        }
      }
    } finally {
      await worker.stop();
    }
  });

  it("pages/escaped: job data never reaches the page as markup", async () => {
    for (const path of ["/jobs?queue=reports", `/jobs/${evilId}`, `/jobs?q=${encodeURIComponent(EVIL)}`]) {
      const text = await (await call(handler, path)).text();
      expect(text, path).not.toContain("<script>alert");
      expect(text, path).not.toContain("<img src=x");
    }
    expect(await (await call(handler, `/jobs/${evilId}`)).text()).toContain("&lt;script&gt;alert(");
  });

  it("pages/bad-filters: a malformed filter shows a 400 page, an unknown id a 404 page", async () => {
    const bad = await call(handler, "/jobs?limit=lots");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("limit must be a whole number");
    expect((await call(handler, "/dead-letters?since=soon")).status).toBe(400);
    expect((await call(handler, "/jobs/00000000-0000-0000-0000-000000000000")).status).toBe(404);
    expect((await call(handler, "/dead-letters/nope")).status).toBe(404);
    expect((await call(handler, "/nothing-here")).status).toBe(404);
  });

  it("pages/dead-letter-redirect: a dead-lettered id under /jobs leads to its dead-letter page", async () => {
    const res = await call(handler, `/jobs/${app.dead[0]}`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dead-letters/${app.dead[0]}`);
  });

  it("pages/job-trace-link: the job page shows the trace id, linked through traceUrl when it gives an http(s) URL", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const traced = new Soniq({ backend: memoryBackend() });
    traced.job("traced.job", async () => null);
    traced.use({ producer: (_event, send) => send({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` }) });
    try {
      const { id } = await traced.jobs.enqueue("traced.job", {});
      const plain = await (await call(handlerFor(traced), `/jobs/${id}`)).text();
      expect(plain).toContain(`<code data-testid="job-trace">${traceId}</code>`);
      const linked = handlerFor(traced, { traceUrl: (t) => `https://jaeger.example.com/trace/${t}` });
      expect(await (await call(linked, `/jobs/${id}`)).text()).toContain(
        `href="https://jaeger.example.com/trace/${traceId}"`,
      );
      const unsafe = handlerFor(traced, { traceUrl: () => "javascript:alert(1)" });
      expect(await (await call(unsafe, `/jobs/${id}`)).text()).not.toContain("javascript:");
      const untraced = await (await call(handler, `/jobs/${app.done[0]}`)).text();
      expect(untraced).not.toContain('data-testid="job-trace"');
      expect(() => handlerFor(traced, { traceUrl: "https://x" as never })).toThrow(
        /traceUrl must be a function/,
      );
    } finally {
      await traced.close();
    }
  });

  it("pages/args-version: the job and dead-letter pages show the args version, or unversioned", async () => {
    const page = async (h: ReturnType<typeof handlerFor>, path: string) => (await call(h, path)).text();
    expect(await page(handler, `/jobs/${app.retrying[0]}`)).toContain(
      '<dt>Args version</dt><dd data-testid="job-args-version">1</dd>',
    );
    expect(await page(handler, `/dead-letters/${app.dead[0]}`)).toContain(
      '<dt>Args version</dt><dd data-testid="dead-letter-args-version">1</dd>',
    );
    const producer = new Soniq({ backend: memoryBackend(), allowUnknownJobNames: true });
    try {
      const versioned = await producer.jobs.enqueue("legacy.sync", { n: 1 }, { version: 4 });
      const plain = await producer.jobs.enqueue("legacy.sync", { n: 2 });
      const h = handlerFor(producer);
      expect(await page(h, `/jobs/${versioned.id}`)).toContain('data-testid="job-args-version">4</dd>');
      expect(await page(h, `/jobs/${plain.id}`)).toContain('data-testid="job-args-version">unversioned</dd>');
    } finally {
      await producer.close();
    }
  });

  it("pages/write-controls: shown to a write session only, with the CSRF token in the page", async () => {
    const keyed = handlerFor(app.soniq, { apiKeys: KEYS });
    expect(await (await call(handler, `/dead-letters/${app.dead[0]}`)).text()).not.toContain("data-post=");
    const { cookie, csrf } = await login(keyed, WRITE_KEY);
    const page = await (await call(keyed, `/dead-letters/${app.dead[0]}`, { cookie })).text();
    expect(page).toContain(`data-post="/api/dead-letters/${app.dead[0]}/replay"`);
    expect(page).toContain(csrf);
  });

  it("pages/base-path: everything lives under basePath", async () => {
    const mounted = handlerFor(app.soniq, { basePath: "/admin/soniq" });
    expect((await call(mounted, "/admin/soniq/api/stats")).status).toBe(200);
    const page = await (await call(mounted, "/admin/soniq/jobs")).text();
    expect(page).toContain('href="/admin/soniq/assets/app.css"');
    expect((await call(mounted, "/api/stats")).status).toBe(404);
  });
});

describe("safety", () => {
  it("safety/no-5xx-for-bad-input: odd query strings and paths are 4xx", async () => {
    const paths = [
      "/api/jobs?limit=99999999999999999999",
      "/api/jobs?cursor=eyJvIjoxLCJ0IjoiYSIsImkiOjF9",
      "/api/jobs?q=%00%01",
      `/api/jobs?q=${"a".repeat(500)}`,
      "/api/jobs?status=,,",
      "/api/dead-letters?reason=%0a",
      "/api/dead-letters?since=99999999999999999",
      "/api/dead-letters?until=2026-13-45",
      "/api/jobs/%E0%A4%A",
      "/api/metrics?bucketMs=-5",
      "/api/audit?limit=x",
      "/api/schedules/%2e%2e",
      "/api/queues/x/pause",
      "/api/queues/x/configure",
    ];
    for (const path of paths) {
      const res = await call(
        handler,
        path,
        /pause|configure/.test(path) ? { method: "POST", key: "x", body: "{bad" } : {},
      );
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
    }
  });

  it("safety/backend-failure: an unexpected error is a 500 without details, reported to onError", async () => {
    const errors: unknown[] = [];
    const broken = new Soniq({ backend: memoryBackend() });
    await broken.setup();
    await broken.close();
    const h = dashboard({ soniq: broken, allowedHosts: ["dash.test"], onError: (e) => errors.push(e) });
    const res = await call(h, "/api/stats");
    expect(res.status).toBe(500);
    expect((await json<{ error: { code: string; message: string } }>(res)).error).toEqual({
      code: "internal",
      message: "The dashboard failed to answer; see the server log.",
    });
    expect(isSoniqError(errors[0], "SONIQ_CLOSED")).toBe(true);
  });

  it("safety/options: every problem reported at once as SONIQ_INVALID_OPTIONS", () => {
    let caught: unknown;
    try {
      dashboard({
        soniq: app.soniq,
        apiKeys: [
          { key: "short", label: "has space" },
          { key: WRITE_KEY, label: "ok", scope: "admin" as "read" },
        ],
        basePath: "admin/",
      });
    } catch (err) {
      caught = err;
    }
    expect(isSoniqError(caught, "SONIQ_INVALID_OPTIONS")).toBe(true);
    const problems = (caught as { context: { problems: string[] } }).context.problems;
    expect(problems).toHaveLength(4);
    expect(() => dashboard({} as never)).toThrow(/soniq must be a Soniq instance/);
  });

  it("safety/serve-loopback: serveDashboard binds 127.0.0.1 by default and closes", async () => {
    const server = await serveDashboard({ soniq: app.soniq, port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${server.url}/api/stats`);
      expect(res.status).toBe(200);
      // The sum of soniq.queues.list(): on a small table every count is exact, so it equals jobs.stats().
      expect((await res.json()) as unknown).toEqual({
        stats: await app.soniq.jobs.stats(),
        estimated: [],
      });
    } finally {
      await server.close();
    }
    await expect(fetch(`${server.url}/api/stats`)).rejects.toThrow();
    await expect(serveDashboard({ soniq: app.soniq, port: 70000 })).rejects.toMatchObject({
      code: "SONIQ_INVALID_OPTIONS",
    });
  });

  it("safety/node-listener: mounted under a prefix in an app's own node:http server, as docs/reference/dashboard.md shows", async () => {
    const listener = nodeListener(dashboard({ soniq: app.soniq, basePath: "/soniq", apiKeys: KEYS }));
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/soniq")) return void listener(req, res);
      res.end("the app");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/`)).text()).toBe("the app");
      expect((await fetch(`${base}/soniq/api/stats`)).status).toBe(401);
      const res = await fetch(`${base}/soniq/api/jobs/${app.reports[1]}/cancel`, {
        method: "POST",
        headers: { authorization: `Bearer ${WRITE_KEY}` },
      });
      expect(res.status).toBe(200);
      expect((await app.soniq.jobs.get(app.reports[1] as string))?.status).toBe("cancelled");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
