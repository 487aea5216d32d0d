/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core (never a browser
 * download; .ci/run installs chromium with apt when it is missing). Takes the screenshots docs/reference/dashboard.md shows.
 * The pages of the seeded app; schedules, flows and webhooks, each on its own app: browser-own-apps.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DashboardServer, serveDashboard } from "../src/index.js";
import { DOCS, type InPage, useChromium } from "./browser-support.js";
import { KEYS, READ_KEY, type Seeded, seededApp, WRITE_KEY } from "./support.js";

const chromium = useChromium();
let app: Seeded;
let server: DashboardServer;
const newPage = chromium.newPage;
const loggedIn = (key: string, base = server.url) => chromium.loggedIn(key, base);

beforeAll(async () => {
  app = await seededApp();
  server = await serveDashboard({ soniq: app.soniq, port: 0, apiKeys: KEYS, refreshIntervalMs: 600_000 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await app?.soniq.close();
});

describe("in chromium", { timeout: 60_000 }, () => {
  it("browser/refused-without-key: pages lead to the login form and the API answers 401", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/dead-letters`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await expect(page.textContent("label[for=key]")).resolves.toBe("API key");
    const status = await page.evaluate(() => fetch("/api/stats").then((r) => r.status));
    expect(status).toBe(401);
    await page.fill("#key", "not-a-valid-key-at-all");
    await page.click("button[type=submit]");
    await expect(page.textContent("[role=alert]")).resolves.toContain("not valid");
  });

  it("browser/overview: the six stats after logging in (screenshot)", async () => {
    const page = await loggedIn(WRITE_KEY);
    const stats = await app.soniq.jobs.stats();
    for (const key of ["total", "queued", "done", "dead_letter"] as const) {
      await expect(page.textContent(`[data-stat=${key}] .value`)).resolves.toBe(String(stats[key]));
    }
    await expect(page.locator("[data-testid=queues] tr[data-queue]").count()).resolves.toBe(2);
    await page.screenshot({ path: `${DOCS}overview.png`, fullPage: true });
  });

  it("browser/filter-jobs: the status filter narrows the table", async () => {
    const page = await loggedIn(WRITE_KEY);
    await page.goto(`${server.url}/jobs`);
    await page.selectOption("select[name=status]", "done");
    await Promise.all([page.waitForURL(/status=done/), page.click("form.filters button[type=submit]")]);
    const statuses = await page.locator("[data-testid=jobs] tbody .status").allTextContents();
    expect(statuses).toHaveLength(app.done.length);
    expect(new Set(statuses)).toEqual(new Set(["done"]));
  });

  it("browser/open-job: a job's detail shows its args and its error with the stack (screenshot)", async () => {
    const page = await loggedIn(WRITE_KEY);
    await page.goto(`${server.url}/jobs?name=billing.charge`);
    await Promise.all([page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/), page.click("[data-testid=jobs] tbody a")]);
    await expect(page.textContent("[data-testid=job-error]")).resolves.toMatch(/gateway timeout[\s\S]*at /);
    await expect(page.textContent("[data-testid=job-args]")).resolves.toContain('"cents": 500');
    await expect(page.textContent("[data-testid=job-fields]")).resolves.toContain("1 of 3");
    await page.screenshot({ path: `${DOCS}job-detail.png`, fullPage: true });
  });

  it("browser/replay: a write key replays a dead letter, lands on the new job, and the audit log shows it", async () => {
    const page = await loggedIn(WRITE_KEY);
    const id = app.dead[0] as string;
    await page.goto(`${server.url}/dead-letters/${id}`);
    await Promise.all([page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/), page.click("button:has-text('Replay')")]);
    const newId = new URL(page.url()).pathname.split("/").pop() as string;
    expect((await app.soniq.jobs.get(newId))?.status).toBe("queued");
    expect((await app.soniq.deadLetters.get(id))?.resurrectionCount).toBe(1);
    await page.goto(`${server.url}/audit`);
    await expect(
      page.locator("tr[data-audit-action='dead_letter.replay']").first().textContent(),
    ).resolves.toContain("dashboard:ops");
  });

  it("browser/bulk-dry-run: select all matching, see the count, confirm", async () => {
    const page = await loggedIn(WRITE_KEY);
    await page.goto(`${server.url}/dead-letters?name=billing.charge`);
    await page.check("#select-all-matching");
    await page.click("button[data-bulk=replay]");
    await expect(page.textContent(".confirm p")).resolves.toBe(
      `Would replay ${app.dead.length} dead-letter job(s).`,
    );
    const before = (await app.soniq.jobs.list({ status: "queued", jobName: "billing.charge" })).length;
    await page.click(".confirm button:has-text('Confirm')");
    await page.waitForSelector("#flash.ok");
    await expect(page.textContent("#flash")).resolves.toBe(`Replayed ${app.dead.length} dead-letter job(s).`);
    expect((await app.soniq.jobs.list({ status: "queued", jobName: "billing.charge" })).length).toBe(
      before + app.dead.length,
    );
  });

  it("browser/read-key: no write buttons, and a forged write is refused", async () => {
    const page = await loggedIn(READ_KEY);
    await page.goto(`${server.url}/dead-letters/${app.dead[1]}`);
    await expect(page.locator("button[data-post]").count()).resolves.toBe(0);
    const status = await page.evaluate(async (id) => {
      const token =
        (globalThis as unknown as InPage).document
          .querySelector("meta[name=csrf-token]")
          ?.getAttribute("content") ?? "";
      const res = await fetch(`/api/dead-letters/${id}/purge`, {
        method: "POST",
        headers: { "x-csrf-token": token },
      });
      return res.status;
    }, app.dead[1] as string);
    expect(status).toBe(403);
    expect(await app.soniq.deadLetters.get(app.dead[1] as string)).not.toBeNull();
  });

  it("browser/theme-refresh-keyboard: dark mode toggle, auto-refresh updates and pauses, skip link first", async () => {
    const fast = await serveDashboard({ soniq: app.soniq, port: 0, apiKeys: KEYS, refreshIntervalMs: 300 });
    try {
      const page = await loggedIn(WRITE_KEY, fast.url);
      await page.keyboard.press("Tab");
      await expect(
        page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.className),
      ).resolves.toBe("skip");
      await page.click("#theme-toggle");
      await expect(page.getAttribute("html", "data-theme")).resolves.toBe("dark");
      const total = (await app.soniq.jobs.stats()).total;
      await app.soniq.jobs.enqueue("reports.build", {}, { queue: "reports" });
      await page.waitForFunction(
        (t) =>
          (globalThis as unknown as InPage).document.querySelector("[data-stat=total] .value")
            ?.textContent === String(t),
        total + 1,
        { timeout: 10_000 },
      );
      await page.click("#refresh-toggle");
      await expect(page.getAttribute("#refresh-toggle", "aria-pressed")).resolves.toBe("true");
      await expect(page.textContent("#refresh-status")).resolves.toBe("auto-refresh paused");
    } finally {
      await fast.close();
    }
  });

  it("browser/queue-controls: pause and limits post from the page to soniq.queues, audited with the key's label", async () => {
    const page = await loggedIn(WRITE_KEY);
    await page.goto(`${server.url}/queues`);
    const form = "form[data-configure$='/queues/default/configure']";
    await page.fill(`${form} input[name=concurrency]`, "5");
    await page.fill(`${form} input[name=rateMax]`, "none");
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector("#flash.ok");
    await page.click("button[data-post$='/queues/default/pause']");
    await page.waitForFunction(
      () =>
        (globalThis as unknown as InPage).document.querySelector("#flash")?.textContent === "Paused default.",
    );
    expect(await app.soniq.queues.get("default")).toMatchObject({
      paused: true,
      concurrency: 5,
      rateLimit: null,
    });
    const audit = await app.soniq.audit.list({ limit: 10 });
    expect(audit.filter((e) => e.target === "default").map((e) => [e.action, e.actor])).toEqual([
      ["queue.pause", "dashboard:ops"],
      ["queue.configure", "dashboard:ops"],
    ]);
    await app.soniq.queues.resume("default");
    await app.soniq.queues.configure("default", { concurrency: null });
  });

  it("browser/workers: each worker's state as core derives it (screenshot)", async () => {
    const worker = app.soniq.worker({ queues: ["idle"], pollIntervalMs: 60_000 });
    await worker.start();
    try {
      const page = await loggedIn(WRITE_KEY);
      await page.goto(`${server.url}/workers`);
      const states = await page.locator("[data-testid=workers] tbody .status").allTextContents();
      expect(states).toEqual((await app.soniq.workers.list()).map((w) => w.state));
      expect(states[0]).toBe("live");
      await expect(page.textContent("[data-testid=worker-counts]")).resolves.toMatch(
        /^1 live(, \d+ stopped)?$/,
      );
      await page.screenshot({ path: `${DOCS}workers.png`, fullPage: true });
    } finally {
      await worker.stop();
    }
  });
});
