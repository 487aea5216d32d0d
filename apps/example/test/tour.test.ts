/**
 * The same scripted tour `pnpm example` runs, on SQLite (a temp file) and on PostgreSQL (a database of
 * its own), checked step by step.
 */
import type { JobStep } from "@soniq/core";
import { shortId } from "@soniq/core/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseTarget } from "../src/database.js";
import { runTour, type TourSummary } from "../src/tour-script.js";
import { createPostgresDatabase, tempDir } from "./support.js";

function checkTour(summary: TourSummary, lines: string[]): void {
  expect(summary.rejectedStatus).toBe(400);
  // 8 order jobs and the replayed receipt; 4 steps of Ada's flow; Grace's 4 steps and her replayed charge;
  // the two returns and the replay of Grace's; the version-1 review request.
  expect(summary.stats).toEqual({
    total: 22,
    queued: 0,
    processing: 0,
    done: 19,
    dead_letter: 3,
    cancelled: 0,
  });
  expect(summary.deadLetter).toMatchObject({
    jobName: "orders.email_receipt",
    deadLetterReason: "max_retries_exceeded",
    attempts: 2,
    resurrectionCount: 1,
  });
  expect(summary.deadLetter.lastError).toContain("550 5.1.1 <grace@example.invalid>");
  expect(summary.replayedJob).toMatchObject({ jobName: "orders.email_receipt", status: "done", attempts: 1 });
  expect(summary.replayedJob.result).toMatchObject({ to: "grace@example.com" });
  expect(summary.orders).toHaveLength(2);
  for (const order of summary.orders) {
    expect(order.invoiceNumber).toMatch(/^INV-\d{4}-[0-9A-F]{8}$/);
    expect(order.stockReservedAt).not.toBeNull();
    expect(order.receiptSentAt).not.toBeNull();
    expect(order.reviewRequestedAt).not.toBeNull();
    // The delayed job waited for its delay (1500 ms) before running.
    const delay = Date.parse(String(order.reviewRequestedAt)) - Date.parse(String(order.createdAt));
    expect(delay).toBeGreaterThanOrEqual(1400);
  }
  // The flaky warehouse: each reserve_stock job (two per order: its own, and its flow's reserve step) failed
  // twice, then succeeded on attempt 3.
  const reserve = summary.workerLines.filter((l) => l.startsWith("orders.reserve_stock"));
  expect(reserve.filter((l) => l.includes("failed attempt 1/5"))).toHaveLength(4);
  expect(reserve.filter((l) => l.includes("failed attempt 2/5"))).toHaveLength(4);
  expect(reserve.filter((l) => l.includes("done on attempt 3"))).toHaveLength(4);
  // Grace's flow: held by its dead-lettered charge (nothing shipped), resumed by the replay.
  const states = (flow: TourSummary["heldFlow"]) => flow.steps.map((st) => `${st.ref}:${st.state}`);
  expect(summary.heldFlow.state).toBe("held");
  expect(states(summary.heldFlow)).toEqual([
    "charge:dead_lettered",
    "reserve:done",
    "ship:held",
    "notify:waiting",
  ]);
  expect(summary.resumedFlow.state).toBe("succeeded");
  expect(states(summary.resumedFlow)).toEqual(["charge:done", "reserve:done", "ship:done", "notify:done"]);
  const charge = summary.resumedFlow.steps.find((st) => st.ref === "charge");
  const heldCharge = summary.heldFlow.steps.find((st) => st.ref === "charge");
  expect(charge?.jobIds).toEqual([heldCharge?.jobId, charge?.jobId]); // the replay took the step's place
  expect(summary.adaFlow.state).toBe("succeeded");
  expect(lines).toContain(
    "  the payment provider declined the charge for good, so ship is held: nothing shipped, nothing lost\n",
  );
  expect(
    summary.workerLines.some((l) => l.includes("moved to the dead-letter table (max_retries_exceeded)")),
  ).toBe(true);
  checkReturns(summary.returns, lines);
  checkUpcast(summary, lines);
  expect(lines.at(-1)).toMatch(/^\nTour finished in \d+\.\d s\.$/);
}

/** The durable-steps chapter: Ada's return waited, slept and refunded; Grace's replay kept its label. */
function checkReturns(r: TourSummary["returns"], lines: string[]): void {
  expect(r.waiting).toMatchObject({ status: "queued" });
  expect(r.waiting.reasons.map((x) => x.code)).toContain("waiting_for_signal");
  expect(r.adaReturn).toMatchObject({ jobName: "orders.process_return", status: "done", attempts: 1 });
  const timeline = (steps: JobStep[]) => steps.map((st) => [st.name, st.kind, st.state, st.attempt]);
  expect(timeline(r.adaSteps)).toEqual([
    ["return_label", "step", "done", 1],
    ["parcel_received", "signal", "done", 1],
    ["refund_hold", "sleep", "done", 1],
    ["refund", "step", "done", 1],
  ]);
  const hold = r.adaSteps[2] as JobStep;
  expect(Date.parse(String(hold.finishedAt)) - Date.parse(String(hold.startedAt))).toBeGreaterThanOrEqual(
    1400,
  );
  // The hold and the wait each put the job back in the queue (the 1.5 s hold, the 30-day deadline).
  const back = (id: string) => lines.filter((l) => l.includes(`${shortId(id)} back in the queue, due in`));
  expect(back(r.adaReturn.id)).toHaveLength(2);
  expect(r.deadLetter).toMatchObject({
    jobName: "orders.process_return",
    deadLetterReason: "permanent_failure",
  });
  expect(r.deadLetterSteps.map((st) => st.state)).toEqual(["done", "done", "done", "failed"]);
  expect(r.replayedJob).toMatchObject({
    status: "done",
    result: { refundId: "manual-1", refundedCents: 1000 },
  });
  expect(timeline(r.replayedSteps)).toEqual([
    ["return_label", "step", "done", 1],
    ["parcel_received", "signal", "done", 1],
    ["refund_hold", "sleep", "done", 1],
    ["refund", "step", "done", 0],
  ]);
  expect(r.replayedSteps[0]).toEqual(r.deadLetterSteps[0]); // the label was not made again
}

/** The versions chapter: a review request stored as version 1 ran through the upcaster in the version-2 handler. */
function checkUpcast(summary: TourSummary, lines: string[]): void {
  const ada = summary.orders.find((o) => o.customer === "Ada Lovelace");
  const job = summary.upcastJob;
  expect(job).toMatchObject({
    jobName: "orders.request_review",
    status: "done",
    attempts: 1,
    argsVersion: 1,
    args: { orderId: ada?.id }, // the row keeps the args it was enqueued with
    result: { asked: "Ada Lovelace", channel: "email" }, // the handler got version 2
  });
  expect(summary.workerLines).toContain(
    `orders.request_review ${shortId(job.id)} done on attempt 1: {"asked":"Ada Lovelace","channel":"email"}`,
  );
  expect(lines).toContain(
    `The previous deploy enqueued orders.request_review ${shortId(job.id)} by name as version 1, ` +
      `{"orderId":"${ada?.id}"}, due in 300 ms`,
  );
  // This deploy's own review requests (version 2, enqueued with their channel) ran as they were.
  const own = summary.workerLines.filter(
    (l) => l.startsWith("orders.request_review") && !l.includes(shortId(job.id)),
  );
  expect(own).toHaveLength(2);
  for (const line of own)
    expect(line).toMatch(/done on attempt 1: \{"asked":"[A-Za-z ]+","channel":"email"\}$/);
}

async function tour(database: DatabaseTarget) {
  const lines: string[] = [];
  const summary = await runTour({ database, print: (line) => lines.push(line), stepTimeoutMs: 15_000 });
  return { summary, lines };
}

describe("example/tour on SQLite", () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it("example/tour-sqlite: orders, retries, a dead letter, its replay and the final stats", async () => {
    const { summary, lines } = await tour({ kind: "sqlite", location: dir.file("soniq.db") });
    checkTour(summary, lines);
    expect(lines[0]).toMatch(/^Soniq example tour on SQLite file /);
  }, 30_000);
});

describe("example/tour on PostgreSQL", () => {
  let db: Awaited<ReturnType<typeof createPostgresDatabase>>;
  beforeAll(async () => {
    db = await createPostgresDatabase();
  }, 30_000);
  afterAll(() => db?.drop(), 30_000);

  it("example/tour-postgres: orders, retries, a dead letter, its replay and the final stats", async () => {
    const { summary, lines } = await tour({ kind: "postgres", location: db.url });
    checkTour(summary, lines);
    expect(lines[0]).toMatch(/^Soniq example tour on PostgreSQL 127\.0\.0\.1:5432\/soniq_t_/);
  }, 30_000);
});
