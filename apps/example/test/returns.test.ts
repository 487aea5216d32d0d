/**
 * The return job (durable steps) on SQLite through the HTTP API, end to end: it makes its label, waits for the
 * warehouse's signal without holding a worker (explain: `waiting_for_signal`), holds the refund 1.5 s (a sleep
 * that suspends: explain `sleeping`), refunds, and `GET /jobs/:id/steps` shows the timeline. A damaged parcel
 * dead-letters at the refund; the replay with the refund resolved by hand keeps the label. (The tour runs the
 * same chapter on SQLite and PostgreSQL.)
 */
import type { DeadLetterJob, Explanation, Job, JobStep } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";
import { eventually, tempDir } from "./support.js";

describe("example/returns", () => {
  const dir = tempDir();
  let app: App;
  let base = "";
  const snoozed: string[] = [];
  beforeAll(async () => {
    app = await createApp({
      database: { kind: "sqlite", location: dir.file() },
      workerOptions: { concurrency: 5, pollIntervalMs: 20 },
      jobs: { reviewDelayMs: 60_000, refundHoldMs: 1500 },
    });
    app.worker?.on("job:snoozed", ({ job }) => snoozed.push(job.id));
    base = await app.listen(0);
  });
  afterAll(async () => {
    await app.close();
    dir.remove();
  });

  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };

  const startReturn = async (customer: string, totalCents: number) => {
    const placed = await call<{ order: { id: string } }>("POST", "/orders", {
      customer,
      email: `${customer.toLowerCase()}@example.com`,
      totalCents,
    });
    const started = await call<{ returnId: string }>("POST", `/orders/${placed.body.order.id}/returns`);
    expect(started.status).toBe(202);
    return { orderId: placed.body.order.id, returnId: started.body.returnId };
  };
  const explainCodes = async (id: string) =>
    (await call<Explanation>("GET", `/jobs/${id}/explain`)).body.reasons.map((r) => r.code);
  const steps = async (id: string) =>
    (await call<{ steps: JobStep[] }>("GET", `/jobs/${id}/steps`)).body.steps;
  const done = (id: string) =>
    eventually(async () => {
      const job = (await call<Job>("GET", `/jobs/${id}`)).body;
      expect(job.status).toBe("done");
      return job;
    }, 15_000);

  it("example/return-steps: label, a wait for the parcel, a 1.5 s hold that frees the worker, the refund", async () => {
    const { returnId } = await startReturn("Ada", 4250);
    await eventually(async () => expect(await explainCodes(returnId)).toContain("waiting_for_signal"));
    const waiting = (await call<Job>("GET", `/jobs/${returnId}`)).body;
    expect(waiting).toMatchObject({ status: "queued", attempts: 0 }); // the wait spent no attempt

    const scan = { condition: "as_new", scanId: "scan-1" };
    const sent = await call("POST", `/returns/${returnId}/received`, scan);
    expect(sent).toEqual({ status: 202, body: { status: "stored", woke: true, deadLetter: false } });
    const again = await call("POST", `/returns/${returnId}/received`, scan);
    expect(again.body).toMatchObject({ status: "duplicate", woke: false }); // the same scan, sent twice
    await eventually(async () => expect(await explainCodes(returnId)).toContain("sleeping"));

    const job = await done(returnId);
    expect(job.attempts).toBe(1);
    expect(job.result).toMatchObject({ refunded: true, condition: "as_new", refundedCents: 4250 });
    expect(snoozed.filter((id) => id === returnId)).toHaveLength(2); // the signal wait, then the hold

    const timeline = await steps(returnId);
    expect(timeline.map((st) => [st.name, st.kind, st.state, st.attempt])).toEqual([
      ["return_label", "step", "done", 1],
      ["parcel_received", "signal", "done", 1],
      ["refund_hold", "sleep", "done", 1],
      ["refund", "step", "done", 1],
    ]);
    const [label, parcel, hold, refund] = timeline as [JobStep, JobStep, JobStep, JobStep];
    expect(label.value).toMatchObject({ labelId: (job.result as { labelId: string }).labelId });
    expect(parcel.value).toEqual({ condition: "as_new" });
    expect(hold.wakeAt).not.toBeNull();
    expect(Date.parse(String(hold.finishedAt)) - Date.parse(String(hold.startedAt))).toBeGreaterThanOrEqual(
      1400,
    );
    expect(refund.value).toMatchObject({ refundId: expect.stringMatching(/^re_/), refundedCents: 4250 });

    const late = await call("POST", `/returns/${returnId}/received`, { condition: "as_new" });
    expect(late).toMatchObject({ status: 409, body: { code: "SONIQ_JOB_FINISHED" } });
  }, 20_000);

  it("example/return-resolve: a damaged parcel dead-letters at the refund; the replay resolves it, the label stays", async () => {
    const { returnId } = await startReturn("Grace", 1999);
    // Sent at once: a signal that arrives before the job waits is kept for the wait.
    expect((await call("POST", `/returns/${returnId}/received`, { condition: "damaged" })).status).toBe(202);
    const dead = await eventually(async () => {
      const list = (await call<{ deadLetters: DeadLetterJob[] }>("GET", "/dead-letters")).body.deadLetters;
      const row = list.find((r) => r.id === returnId);
      expect(row).toBeDefined();
      return row as DeadLetterJob;
    }, 15_000);
    expect(dead).toMatchObject({ deadLetterReason: "permanent_failure", attempts: 1 });
    const before = await steps(returnId);
    expect(before.map((st) => `${st.name}:${st.state}`)).toEqual([
      "return_label:done",
      "parcel_received:done",
      "refund_hold:done",
      "refund:failed",
    ]);
    expect(before[3]?.error).toContain("parcel arrived damaged");

    expect((await call("POST", `/dead-letters/${returnId}/replay`, { typo: 1 })).status).toBe(400);
    const bad = await call("POST", `/dead-letters/${returnId}/replay`, { resolve: { "not a step!": 1 } });
    expect(bad).toMatchObject({ status: 400, body: { code: "SONIQ_INVALID_OPTIONS" } });

    const manual = { refundId: "manual-1", refundedCents: 1000 };
    const replay = await call<{ newJobId: string }>("POST", `/dead-letters/${returnId}/replay`, {
      resolve: { refund: manual },
    });
    expect(replay.status).toBe(202);
    const job = await done(replay.body.newJobId);
    expect(job.result).toMatchObject({ refunded: true, condition: "damaged", ...manual });
    const after = await steps(job.id);
    expect(after.map((st) => [st.name, st.state, st.attempt])).toEqual([
      ["return_label", "done", 1],
      ["parcel_received", "done", 1],
      ["refund_hold", "done", 1],
      ["refund", "done", 0], // attempt 0: the operator's value
    ]);
    // The label was not made again: the replay's is the dead letter's, same id, same time.
    expect(after[0]).toEqual(before[0]);
  }, 20_000);

  it("example/return-edges: bad scans are 400s, unknown returns 404s, and nothing is signalled", async () => {
    const missing = "0193c6e2-0000-7000-8000-000000000000";
    expect((await call("POST", `/orders/${missing}/returns`)).status).toBe(404);
    expect((await call("POST", `/returns/${missing}/received`, { condition: "as_new" })).status).toBe(404);
    expect((await call("GET", `/jobs/${missing}/explain`)).status).toBe(404);
    expect((await call("GET", `/jobs/${missing}/steps`)).body).toEqual({ steps: [] });
    const order = await call<{ jobIds: string[] }>("POST", "/orders", {
      customer: "Linus",
      email: "linus@example.com",
      totalCents: 100,
    });
    const invoice = order.body.jobIds[0] as string; // a job, but not a return
    expect((await call("POST", `/returns/${invoice}/received`, { condition: "as_new" })).status).toBe(404);
    const { returnId } = await startReturn("Barbara", 500);
    for (const body of [{ condition: "lost" }, {}, { condition: "as_new", scanId: "" }]) {
      expect((await call("POST", `/returns/${returnId}/received`, body)).status).toBe(400);
    }
  });
});
