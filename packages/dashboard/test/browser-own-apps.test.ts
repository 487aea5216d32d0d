/**
 * The dashboard in a real browser, on pages that need their own app: a real schedule, a held flow and a
 * webhook endpoint with a failed delivery (their jobs must not change what browser.test.ts counts).
 */
import type { Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { serveDashboard } from "../src/index.js";
import { DOCS, useChromium } from "./browser-support.js";
import { withFlows } from "./flows-support.js";
import { KEYS, READ_KEY, scheduledApp, seededApp, WRITE_KEY } from "./support.js";
import { deliverUntil, HEADER_TOKEN, webhookApp } from "./webhook-support.js";

const chromium = useChromium();
/** The dashboard over `soniq` on a free port, with the test keys and no auto-refresh during a test. */
const serve = (soniq: Soniq) => serveDashboard({ soniq, port: 0, apiKeys: KEYS, refreshIntervalMs: 600_000 });
const loggedIn = chromium.loggedIn;

describe("in chromium", { timeout: 60_000 }, () => {
  it("browser/schedules: a real schedule's row and detail, and Trigger now lands on the fired job", async () => {
    const sched = await scheduledApp();
    const served = await serve(sched.soniq);
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
      expect(await sched.soniq.jobs.get(jobId)).toMatchObject({
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
    const served = await serve(own.soniq);
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
    const served = await serve(hooks.soniq);
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
