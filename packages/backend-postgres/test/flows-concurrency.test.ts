/**
 * Three apps, each with its own pool and a started worker, drain one flow's fan-in at once: their settles of
 * the same flow's parents run in concurrent transactions, serialised on the flow row, and the child is
 * released once. A flows.cancel racing the workers' settles waits its turn instead of deadlocking.
 */
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
const gate = (() => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open: () => open() };
})();
const apps: Soniq[] = [];

beforeAll(async () => {
  db = await createMigratedDatabase();
});
afterAll(async () => {
  gate.open();
  for (const app of apps.splice(0)) await app.close();
  await db?.drop();
});

function app(runs: { child: number }): Soniq {
  const soniq = new Soniq({ backend: postgresBackend({ connectionString: db.url }) });
  soniq.job("fan.parent", async () => 1);
  soniq.job("fan.slow_parent", async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return 1;
  });
  // Holds its flow open until the test opens the gate (after the cancel): the flow cannot finish first.
  soniq.job("fan.gate", async () => {
    await gate.opened;
    return 1;
  });
  soniq.job("fan.child", async (_args, ctx) => {
    runs.child++;
    return Object.keys((await ctx.flow?.parents()) ?? {}).length;
  });
  apps.push(soniq);
  return soniq;
}

describe("flows/concurrent-workers on Postgres", () => {
  it("flows/concurrent-fan-in: three apps settling one fan-in of 600 at once release the child once", async () => {
    const runs = { child: 0 };
    const [a, b, c] = [app(runs), app(runs), app(runs)] as [Soniq, Soniq, Soniq];
    const steps: Record<string, { job: string; dependsOn?: string[] }> = {};
    const refs = Array.from({ length: 600 }, (_, i) => `p${i}`);
    for (const ref of refs) steps[ref] = { job: "fan.parent" };
    steps.child = { job: "fan.child", dependsOn: refs };
    const flow = await a.flows.start({ steps });
    const workers = [a, b, c].map((s) => s.worker({ concurrency: 8, pollIntervalMs: 20 }));
    await Promise.all(workers.map((w) => w.start()));
    const done = await a.flows.waitFor(flow.id, { timeoutMs: 90_000, pollIntervalMs: 50 });
    await Promise.all(workers.map((w) => w.stop()));
    expect(done.state).toBe("succeeded");
    expect(done.counts).toEqual({ total: 601, open: 0, done: 601, failed: 0, held: 0 });
    expect(runs.child).toBe(1);
    expect((await a.jobs.get(flow.jobs.child as string))?.result ?? null).toBe(600);
  }, 120_000);

  it("flows/cancel-races-settles: flows.cancel while three workers settle the flow's steps succeeds, and nothing runs after it", async () => {
    const runs = { child: 0 };
    const [a, b, c] = [app(runs), app(runs), app(runs)] as [Soniq, Soniq, Soniq];
    const steps: Record<string, { job: string; dependsOn?: string[] }> = {};
    const refs = Array.from({ length: 400 }, (_, i) => `p${i}`);
    for (const ref of refs) steps[ref] = { job: "fan.slow_parent" };
    // On a loaded machine the 400 parents could all be done before the cancel: the gate keeps the flow open.
    steps.gate = { job: "fan.gate" };
    steps.child = { job: "fan.child", dependsOn: [...refs, "gate"] };
    const flow = await a.flows.start({ steps });
    const workers = [a, b, c].map((s) => s.worker({ concurrency: 8, pollIntervalMs: 20 }));
    await Promise.all(workers.map((w) => w.start()));
    await expect
      .poll(async () => (await a.flows.get(flow.id))?.counts.done ?? 0, { timeout: 30_000 })
      .toBeGreaterThan(20);
    expect(await b.flows.cancel(flow.id)).toBe(true);
    gate.open();
    await Promise.all(workers.map((w) => w.stop()));
    const after = await a.flows.get(flow.id);
    expect(after?.state).toBe("cancelled");
    expect(after?.counts.open).toBe(0);
    expect(runs.child).toBe(0);
    expect(after?.steps.find((s) => s.ref === "child")?.state).toBe("cancelled");
  }, 120_000);
});
