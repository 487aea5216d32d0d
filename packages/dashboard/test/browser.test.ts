/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core (never a browser
 * download; .ci/run installs chromium with apt when it is missing). Takes the README's screenshots.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DashboardServer, serveDashboard } from "../src/index.js";
import { withFlows } from "./flows-support.js";
import { KEYS, READ_KEY, type Seeded, scheduledApp, seededApp, WRITE_KEY } from "./support.js";
import { deliverUntil, HEADER_TOKEN, webhookApp } from "./webhook-support.js";

/** The few DOM members the in-page callbacks use (the repo compiles without the DOM lib). */
interface InPage {
  document: {
    activeElement: { className: string } | null;
    querySelector(
      selector: string,
    ): { textContent: string | null; getAttribute(name: string): string | null } | null;
  };
}

/**
 * The README's screenshots are rewritten only when asked (`UPDATE_SCREENSHOTS=1`), so a test run leaves the
 * work tree clean; otherwise they are still taken, into a temporary folder.
 */
const DOCS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? fileURLToPath(new URL("../docs/", import.meta.url))
    : `${mkdtempSync(join(tmpdir(), "soniq-dashboard-shots-"))}/`;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let app: Seeded;
let server: DashboardServer;
let browser: Browser;
const contexts: BrowserContext[] = [];
/** Uncaught exceptions in the pages' script; every test ends with none. */
const pageErrors: string[] = [];

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: "light" });
  contexts.push(context);
  const page = await context.newPage();
  page.on("pageerror", (err) => pageErrors.push(`${page.url()}: ${err.message}`));
  return page;
}

async function loggedIn(key: string, base = server.url): Promise<Page> {
  const page = await newPage();
  await page.goto(`${base}/`);
  await page.fill("#key", key);
  await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
  return page;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no browser at ${CHROMIUM}: install Debian's chromium (sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary`,
    );
  mkdirSync(DOCS, { recursive: true });
  app = await seededApp();
  server = await serveDashboard({ soniq: app.soniq, port: 0, apiKeys: KEYS, refreshIntervalMs: 600_000 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}, 60_000);

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
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
    const stats = await app.soniq.getQueueStats();
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
    expect((await app.soniq.getJob(newId))?.status).toBe("queued");
    expect((await app.soniq.deadLetter.get(id))?.resurrectionCount).toBe(1);
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
    const before = (await app.soniq.listJobs({ status: "queued", jobName: "billing.charge" })).length;
    await page.click(".confirm button:has-text('Confirm')");
    await page.waitForSelector("#flash.ok");
    await expect(page.textContent("#flash")).resolves.toBe(`Replayed ${app.dead.length} dead-letter job(s).`);
    expect((await app.soniq.listJobs({ status: "queued", jobName: "billing.charge" })).length).toBe(
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
    expect(await app.soniq.deadLetter.get(app.dead[1] as string)).not.toBeNull();
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
      const total = (await app.soniq.getQueueStats()).total;
      await app.soniq.enqueue("reports.build", {}, { queue: "reports" });
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

  it("browser/schedules: a real schedule's row and detail, and Trigger now lands on the fired job", async () => {
    const sched = await scheduledApp();
    const served = await serveDashboard({
      soniq: sched.soniq,
      port: 0,
      apiKeys: KEYS,
      refreshIntervalMs: 600_000,
    });
    try {
      const page = await loggedIn(WRITE_KEY, served.url);
      await page.goto(`${served.url}/schedules`);
      const row = page.locator("tr[data-schedule='reports.hourly']");
      await expect(row.textContent()).resolves.toContain("every 1h");
      await expect(row.locator(".status").textContent()).resolves.toBe("active");
      await Promise.all([
        page.waitForURL(`${served.url}/schedules/reports.hourly`),
        row.locator("a[href$='/schedules/reports.hourly']").click(),
      ]);
      await expect(page.locator("[data-testid=ticks] tr[data-outcome=fired]").count()).resolves.toBe(3);
      await expect(page.locator("[data-testid=upcoming] li").count()).resolves.toBe(5);

      await sched.clock.advance(60_000); // a minute after the last tick, so the trigger is a tick of its own
      await Promise.all([
        page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/),
        page.click("button:has-text('Trigger now')"),
      ]);
      const jobId = new URL(page.url()).pathname.split("/").pop() as string;
      expect(await sched.soniq.getJob(jobId)).toMatchObject({
        jobName: "reports.build",
        status: "queued",
        queue: "reports",
        args: { kind: "hourly" },
      });
      const [latest] = await sched.soniq.schedules.history("reports.hourly", { limit: 1 });
      expect(latest).toMatchObject({ outcome: "fired", reason: "trigger", jobId });

      await page.goto(`${served.url}/schedules/reports.hourly`);
      await expect(page.textContent("[data-testid=ticks] tbody tr:first-child")).resolves.toContain(
        "trigger",
      );
      await page.click("button[data-post$='/schedules/reports.hourly/pause']");
      // the page refreshes in place: the Pause button becomes Resume and the state badge says paused
      await page.waitForSelector("button[data-post$='/schedules/reports.hourly/resume']", {
        timeout: 10_000,
      });
      await expect(page.textContent("[data-testid=schedule] .status")).resolves.toBe("paused");
      expect((await sched.soniq.schedules.get("reports.hourly"))?.paused).toBe(true);
    } finally {
      await served.close();
      await sched.soniq.close();
    }
  });

  it("browser/flow: the held flow's graph, a step's link, replay of the held parent and cancel (screenshot)", async () => {
    // Its own app and server: the flows' jobs must not change what the other tests count.
    const own = await seededApp();
    const flows = await withFlows(own);
    const served = await serveDashboard({
      soniq: own.soniq,
      port: 0,
      apiKeys: KEYS,
      refreshIntervalMs: 600_000,
    });
    try {
      const page = await loggedIn(WRITE_KEY, served.url);
      await page.goto(`${served.url}/flows`);
      await Promise.all([
        page.waitForURL(`${served.url}/flows/${flows.held}`),
        page.click(`a[href="/flows/${flows.held}"]`),
      ]);
      await expect(page.locator("[data-testid=flow-graph] g.step").count()).resolves.toBe(4);
      await expect(page.locator("[data-testid=flow-graph] path.edge").count()).resolves.toBe(3);
      const stroke = (el: unknown): string =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { stroke: string } }).getComputedStyle(el)
          .stroke;
      const held = await page.locator("g.step.held rect").evaluate(stroke);
      const done = await page.locator("g.step.done rect").evaluate(stroke);
      expect(held).not.toBe(done); // states are coloured apart
      await page.screenshot({ path: `${DOCS}flow.png`, fullPage: true });

      await Promise.all([
        page.waitForURL(`${served.url}/dead-letters/${flows.deadCharge}`),
        page.click("g.step[data-ref=charge] a"),
      ]);
      await page.goBack();
      await page.click("[data-testid=replay-charge]");
      await page.waitForSelector("#flash.ok");
      await expect(page.textContent("#flash")).resolves.toContain("Replayed charge");
      const [entry] = await own.soniq.audit.list({ action: "dead_letter.replay", limit: 1 });
      expect(entry).toMatchObject({ actor: "dashboard:ops", target: flows.deadCharge });
      // The replayed charge is queued in the step's place (the page refreshes in place); the flow can be cancelled.
      await page.waitForSelector("g.step.queued[data-ref=charge]", { timeout: 10_000 });
      await expect(page.locator("[data-testid=replay-charge]").count()).resolves.toBe(0);
      await expect(page.textContent("[data-testid=flow-banner]")).resolves.toContain(
        "wait for a replayed parent",
      );
      await page.click("[data-testid=cancel-flow]");
      await expect(page.textContent("[data-testid=cancel-flow]")).resolves.toBe(
        "Click again to cancel the flow",
      );
      await page.click("[data-testid=cancel-flow]");
      await page.waitForSelector("[data-testid=flow-fields] dd:has-text('cancelled')", { timeout: 10_000 });
      const [cancel] = await own.soniq.audit.list({ action: "flow.cancel", limit: 1 });
      expect(cancel).toMatchObject({ actor: "dashboard:ops", target: flows.held });
    } finally {
      await served.close();
      await own.soniq.close();
    }
  });

  it("browser/webhooks: endpoint, its failed delivery, Redeliver (audited) and the delivery sent again (screenshot)", async () => {
    const hooks = await webhookApp();
    const served = await serveDashboard({
      soniq: hooks.soniq,
      port: 0,
      apiKeys: KEYS,
      refreshIntervalMs: 600_000,
    });
    try {
      const page = await loggedIn(WRITE_KEY, served.url);
      await page.click("nav.main a:has-text('Webhooks')");
      const row = page.locator(`tr[data-endpoint-id='${hooks.endpoint.id}']`);
      await expect(row.textContent()).resolves.toContain(hooks.receiver.url);
      await Promise.all([
        page.waitForURL(`${served.url}/webhooks/${hooks.endpoint.id}`),
        row.locator("a").click(),
      ]);
      await expect(page.textContent("[data-testid=endpoint]")).resolves.toContain("Authorization");
      expect(await page.content()).not.toContain(HEADER_TOKEN);
      await expect(page.locator("[data-testid=deliveries] tr[data-status=failed]").count()).resolves.toBe(2);
      await page.screenshot({ path: `${DOCS}webhooks.png`, fullPage: true });

      const id = hooks.failed[0] as string;
      await page.goto(`${served.url}/webhook-deliveries?status=failed`);
      await Promise.all([
        page.waitForURL(`${served.url}/webhook-deliveries/${id}`),
        page.click(`tr[data-delivery-id='${id}'] a`),
      ]);
      await expect(page.textContent("[data-testid=delivery]")).resolves.toContain("HTTP 503");
      await page.click("button:has-text('Redeliver')");
      await page.waitForSelector("#flash.ok");
      // the page refreshes in place: the delivery is pending again, so the button is gone
      await page.waitForSelector("button:has-text('Redeliver')", { state: "detached", timeout: 10_000 });
      await expect(page.textContent("[data-testid=delivery] .status")).resolves.toBe("pending");
      const [entry] = await hooks.soniq.audit.list({ action: "webhook.redeliver" });
      expect(entry).toMatchObject({ actor: "dashboard:ops", target: id });

      hooks.receiver.status = 200;
      await deliverUntil(hooks.soniq, async () => {
        expect((await hooks.soniq.webhooks.delivery(id))?.status).toBe("delivered");
      });
      await page.reload();
      await expect(page.textContent("[data-testid=delivery] .status")).resolves.toBe("delivered");
      await page.goto(`${served.url}/audit`);
      await expect(
        page.locator("tr[data-audit-action='webhook.redeliver']").textContent(),
      ).resolves.toContain("dashboard:ops");

      const viewer = await loggedIn(READ_KEY, served.url);
      await viewer.goto(`${served.url}/webhook-deliveries/${hooks.failed[1]}`);
      await expect(viewer.locator("button:has-text('Redeliver')").count()).resolves.toBe(0);
    } finally {
      await served.close();
      await hooks.close();
    }
  });
});
