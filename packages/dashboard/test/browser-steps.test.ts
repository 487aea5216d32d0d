/**
 * Durable steps in a real browser (Debian's chromium driven by playwright-core, as browser.test.ts): a job's
 * step timeline, the signal form (a bad payload refused in the page, the signal delivered, a resend with its key
 * a duplicate) and a dead letter's replay with a resolved step. Takes the timeline's screenshot (docs/reference/dashboard.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DashboardServer, serveDashboard } from "../src/index.js";
import { DOCS, type InPage, useChromium } from "./browser-support.js";
import { type StepsApp, stepsApp, tokenOf } from "./steps-support.js";
import { KEYS, WRITE_KEY } from "./support.js";

const chromium = useChromium();
let app: StepsApp;
let server: DashboardServer;

beforeAll(async () => {
  app = await stepsApp({ redact: ["token", "password"] });
  server = await serveDashboard({ soniq: app.soniq, port: 0, apiKeys: KEYS, refreshIntervalMs: 600_000 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await app?.soniq.close();
});

describe("in chromium", { timeout: 60_000 }, () => {
  it("browser/steps-signal: the timeline of a waiting job, then a signal sent through the form wakes it (screenshot)", async () => {
    const page = await chromium.loggedIn(WRITE_KEY, server.url);
    await page.goto(`${server.url}/jobs/${app.waiting}`);
    const rows = page.locator("[data-testid=steps] tbody tr");
    await expect(rows.count()).resolves.toBe(3);
    await expect(page.locator("[data-testid=steps] tbody .status").allTextContents()).resolves.toEqual([
      "done",
      "done",
      "waiting",
    ]);
    const approval = page.locator("tr[data-step-name=approval]");
    await expect(approval.textContent()).resolves.toMatch(/deadline in 7\.0 d/);
    const account = page.locator("tr[data-step-name=create_account] td.value");
    await expect(account.textContent()).resolves.toBe('{"accountId":"acc_ann","token":"[redacted]"}');
    await expect(page.content()).resolves.not.toContain(tokenOf("ann"));
    await expect(page.inputValue("[data-testid=signal-form] input[name=name]")).resolves.toBe("approval");
    await page.fill("[data-testid=signal-form] textarea[name=payload]", '{ "by": "ops@example.com" }');
    await page.fill("[data-testid=signal-form] input[name=key]", "ticket-4711");
    await page.click("[data-testid=steps] thead"); // focus off the form, for the picture
    await page.locator("[data-testid=steps-section]").screenshot({ path: `${DOCS}job-steps.png` });

    // a payload that is not JSON is refused in the page: nothing is sent
    await page.fill("[data-testid=signal-form] textarea[name=payload]", "{ by: ops }");
    await page.click("[data-testid=signal-form] button[type=submit]");
    await page.waitForSelector("#flash.bad");
    await expect(page.textContent("#flash")).resolves.toMatch(/^The payload is not valid JSON/);
    const byDashboard = async () =>
      (await app.soniq.audit.list({ action: "job.signal", limit: 100 })).filter((e) =>
        e.actor.startsWith("dashboard:"),
      );
    expect(await byDashboard()).toHaveLength(0);

    await page.fill("[data-testid=signal-form] textarea[name=payload]", '{ "by": "ops@example.com" }');
    await page.click("[data-testid=signal-form] button[type=submit]");
    await page.waitForFunction(() =>
      ((globalThis as unknown as InPage).document.querySelector("#flash")?.textContent ?? "").includes(
        "delivered",
      ),
    );
    await expect(page.textContent("#flash")).resolves.toBe(
      "Signal \u201capproval\u201d delivered: the job was waiting for it and is due now.",
    );
    expect(await byDashboard()).toMatchObject([
      { actor: "dashboard:ops", target: app.waiting, params: { name: "approval", key: "ticket-4711" } },
    ]);

    // the form was reset (the waited name back); the same key again changes nothing
    await expect(page.inputValue("[data-testid=signal-form] input[name=key]")).resolves.toBe("");
    await page.fill("[data-testid=signal-form] input[name=key]", "ticket-4711");
    await page.click("[data-testid=signal-form] button[type=submit]");
    await page.waitForSelector("#flash.warn");
    await expect(page.textContent("#flash")).resolves.toBe(
      "A signal with this key was sent before: nothing changed.",
    );

    await app.soniq.worker().runOnce({ maxJobs: 10 });
    await page.reload();
    await expect(page.locator("[data-testid=steps] tbody .status").allTextContents()).resolves.toEqual([
      "done",
      "done",
      "done",
      "done",
    ]);
    await expect(approval.locator("td.value").textContent()).resolves.toBe('{"by":"ops@example.com"}');
    await expect(page.locator("[data-testid=signal-form]").count()).resolves.toBe(0);
  });

  it("browser/steps-replay: a dead letter's failed step, resolved by hand in the replay form, lands on a job that goes on", async () => {
    const page = await chromium.loggedIn(WRITE_KEY, server.url);
    await page.goto(`${server.url}/dead-letters/${app.dead}`);
    const failed = page.locator("tr[data-step-name=charge_card]");
    await expect(failed.locator(".status").textContent()).resolves.toBe("failed");
    await expect(failed.locator("td.err").textContent()).resolves.toBe(
      "Error: card declined for acc_bob (token [redacted], password [redacted])",
    );
    await page.fill("textarea[name=resolve]", '{ "charge_card": { "paymentId": "manual-1" } }');
    await Promise.all([
      page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/),
      page.click("[data-testid=replay-form] button[type=submit]"),
    ]);
    const jobId = new URL(page.url()).pathname.split("/").pop() as string;
    const charge = page.locator("tr[data-step-name=charge_card]");
    await expect(charge.locator(".status").textContent()).resolves.toBe("done");
    await expect(charge.locator("td").nth(4).textContent()).resolves.toBe("resolved");
    await app.soniq.worker().runOnce({ maxJobs: 10 });
    expect((await app.soniq.jobs.get(jobId))?.result).toMatchObject({ payment: { paymentId: "manual-1" } });
    const [entry] = await app.soniq.audit.list({ action: "dead_letter.replay", limit: 1 });
    expect(entry).toMatchObject({ actor: "dashboard:ops", params: { steps: "keep" } });
  });
});
