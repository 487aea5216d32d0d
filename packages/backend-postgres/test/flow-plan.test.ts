/**
 * A settle's flow statements find each step they read or write through the primary key, one ref at a time, on a
 * flow started a moment ago: its table not yet analyzed, so its statistics say the flow has a handful of steps.
 * Written as joins on `flow_id`, Postgres then read every step of the flow for each batch (a bitmap or index scan
 * of the whole flow and a hash join: a 10,000-step fan-in read 10,000 rows per settle to change 500). The plans
 * checked are the ones the backend's own statements ran with, reported by auto_explain as notices on its
 * connection. Also: the steps' table keeps a quarter of each page free (migration 0017), and the flow ends right.
 */
import { Soniq } from "@soniq/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let pool: pg.Pool;
let soniq: Soniq<ReturnType<typeof postgresBackend>>;
/** auto_explain's plans of statements that read or write flow steps, in execution order. */
const stepPlans: string[] = [];

beforeAll(async () => {
  db = await createMigratedDatabase();
  // Superuser-only (the tests connect as postgres): every statement's plan comes back as a notice.
  pool = new pg.Pool({
    connectionString: db.url,
    options:
      "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_level=notice",
  });
  // An idle client the database drops at the end (57P01, terminated by the drop) is not a test failure.
  pool.on("error", (err: Error & { code?: string }) => {
    if (err.code !== "57P01") throw err;
  });
  pool.on("connect", (client) => {
    client.on("notice", (notice) => {
      const text = notice.message ?? "";
      if (/(FROM|UPDATE) soniq_flow_steps/.test(text) && text.includes("unnest")) stepPlans.push(text);
    });
  });
  soniq = new Soniq({ backend: postgresBackend({ pool }) });
  soniq.job("fan.part", async () => null);
  soniq.job("fan.join", async () => "joined");
});
afterAll(async () => {
  await soniq?.close();
  await pool?.end();
  await db?.drop();
});

describe("flows/plan on Postgres", () => {
  it("flows/plan-step-lookups: a fan-in's settles look each step up by its key, never scan the flow", async () => {
    const parts = 1_500;
    const steps: Record<string, { job: string; dependsOn?: string[] }> = {};
    for (let i = 0; i < parts; i++) steps[`p${i}`] = { job: "fan.part" };
    steps.join = { job: "fan.join", dependsOn: Object.keys(steps) };
    const { id } = await soniq.flows.start({ steps });
    stepPlans.length = 0;

    const ran = await soniq.worker({ concurrency: 50 }).runOnce();
    expect(ran).toBe(parts + 1);
    const flow = await pool.query("SELECT state, steps_open FROM soniq_flows WHERE id = $1", [id]);
    expect(flow.rows[0]).toEqual({ state: "succeeded", steps_open: 0 });

    // Each settle read the steps it closes, then their dependents, and wrote their states: all three kinds ran.
    const reads = stepPlans.filter((p) => p.includes("SELECT t.*"));
    const writes = stepPlans.filter((p) => p.includes("UPDATE soniq_flow_steps"));
    expect(reads.length, "step reads").toBeGreaterThan(0);
    expect(writes.length, "step writes").toBeGreaterThan(0);
    for (const plan of stepPlans) {
      expect(plan).toMatch(
        /Index Scan using soniq_flow_steps_pkey[\s\S]*Index Cond: \(\(flow_id = .*\) AND \(ref = /,
      );
      expect(plan).not.toMatch(/Bitmap Heap Scan on soniq_flow_steps|Seq Scan on soniq_flow_steps|Hash Join/);
    }
  });

  it("flows/plan-fillfactor: the steps' table leaves room on each page for its rows' updates", async () => {
    const res = await pool.query("SELECT reloptions FROM pg_class WHERE relname = 'soniq_flow_steps'");
    expect(res.rows[0].reloptions).toContain("fillfactor=75");
  });
});
