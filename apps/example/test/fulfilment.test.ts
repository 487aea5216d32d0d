/**
 * The fulfilment flow on SQLite through the HTTP API: started for an order, its waiting steps are not jobs,
 * charge and reserve run before ship, ship sees the amount charged, notify runs last; unknown ids are 404s.
 * (The held flow and its resume by a replay are checked by the tour, on SQLite and PostgreSQL.)
 */
import type { Job } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";
import { eventually, tempDir } from "./support.js";

describe("example/fulfilment", () => {
  const dir = tempDir();
  let app: App;
  let base = "";
  beforeAll(async () => {
    app = await createApp({
      database: { kind: "sqlite", location: dir.file() },
      workerOptions: { concurrency: 5, pollIntervalMs: 20 },
      jobs: { warehouseFailures: 1, reviewDelayMs: 60_000 },
    });
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

  type Flow = { state: string; steps: { ref: string; state: string; jobId: string }[] };

  it("example/fulfil-order: charge and reserve, then ship with the amount charged, then notify", async () => {
    const order = await call<{ order: { id: string } }>("POST", "/orders", {
      customer: "Ada",
      email: "ada@example.com",
      totalCents: 4250,
    });
    const started = await call<{ flowId: string; jobIds: Record<string, string> }>(
      "POST",
      `/orders/${order.body.order.id}/fulfil`,
    );
    expect(started.status).toBe(202);
    expect(Object.keys(started.body.jobIds)).toEqual(["charge", "reserve", "ship", "notify"]);
    const done = await eventually(async () => {
      const flow = (await call<Flow>("GET", `/flows/${started.body.flowId}`)).body;
      expect(flow.state).toBe("succeeded");
      return flow;
    }, 15_000);
    expect(done.steps.map((s) => `${s.ref}:${s.state}`)).toEqual([
      "charge:done",
      "reserve:done",
      "ship:done",
      "notify:done",
    ]);
    const job = async (ref: string) => {
      const found = await app.soniq.jobs.get(started.body.jobIds[ref] as string);
      if (!found) throw new Error(`no job for step ${ref}`);
      return found;
    };
    const [charge, reserve, ship, notify] = (await Promise.all(
      ["charge", "reserve", "ship", "notify"].map(job),
    )) as [Job, Job, Job, Job];
    // ship became a job only after both parents were done; notify after ship.
    expect(ship.createdAt.getTime()).toBeGreaterThanOrEqual(
      Math.max(charge.updatedAt.getTime(), reserve.updatedAt.getTime()),
    );
    expect(notify.createdAt.getTime()).toBeGreaterThanOrEqual(ship.updatedAt.getTime());
    expect(reserve.attempts).toBe(2); // the flaky warehouse retried inside the step
    expect(ship.result).toMatchObject({ paidCents: 4250, trackingNumber: expect.stringMatching(/^TRK-/) });
    expect(notify.result).toMatchObject({ to: "ada@example.com", subject: "Your order has shipped" });
  });

  it("example/fulfil-unknown: an unknown order or flow is a 404 and starts nothing", async () => {
    const missing = "0193c6e2-0000-7000-8000-000000000000";
    expect((await call("POST", `/orders/${missing}/fulfil`)).status).toBe(404);
    expect((await call("GET", `/flows/${missing}`)).status).toBe(404);
    expect((await call("GET", "/flows/not-an-id")).status).toBe(404);
  });
});
