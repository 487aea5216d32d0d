/** The recurring nightly sales report: declared with the app's jobs, fired on demand, DST-correct. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSoniq } from "../src/app.js";
import { NIGHTLY_REPORT, type SalesReport } from "../src/jobs.js";
import { tempDir } from "./support.js";

const dir = tempDir();
let app: Awaited<ReturnType<typeof openSoniq>>;

beforeAll(async () => {
  app = await openSoniq({ kind: "sqlite", location: dir.file() });
});
afterAll(async () => {
  await app.soniq.close();
  await app.db.close();
  dir.remove();
});

describe("example/nightly-report", () => {
  it("a trigger makes the report of the last 24 hours' orders, recorded in the schedule's ledger", async () => {
    const { soniq, db, jobs } = app;
    for (const totalCents of [1250, 4999]) {
      await db.orders.create({ customer: "Ada", email: "ada@example.com", totalCents }, async () => null);
    }
    const id = await soniq.schedules.trigger(NIGHTLY_REPORT);
    expect(await soniq.worker({ queues: ["reports"] }).runOnce()).toBe(1);
    const report = (await soniq.jobs.get(id))?.result as SalesReport | undefined;
    expect(report).toMatchObject({ orders: 2, totalCents: 6249 });
    const [tick] = await soniq.schedules.history(NIGHTLY_REPORT, { limit: 1 });
    expect(tick).toMatchObject({ outcome: "fired", reason: "trigger", jobId: id });
    expect((await soniq.schedules.get(NIGHTLY_REPORT))?.jobName).toBe(jobs.nightlySales.name);
  });

  it("fires at 02:00 Berlin time, winter and summer; at 03:00 on the night 02:00 does not exist", async () => {
    const berlin = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      weekday: "short",
      month: "short",
      hour: "2-digit",
      minute: "2-digit",
    });
    const local = (d: Date) =>
      Object.fromEntries(berlin.formatToParts(d).map((p) => [p.type, p.value])) as Record<string, string>;
    const next = (await app.soniq.schedules.upcoming(NIGHTLY_REPORT, 400)).map(local);
    const shifted = next.filter((t) => `${t.hour}:${t.minute}` !== "02:00");
    // The last Sunday of March jumps from 02:00 to 03:00: that night the report runs at 03:00.
    expect(shifted.length).toBeGreaterThanOrEqual(1);
    for (const t of shifted)
      expect([t.weekday, t.month, `${t.hour}:${t.minute}`]).toEqual(["Sun", "Mar", "03:00"]);
  });
});
