/**
 * `flows.start` on Postgres: with `{ tx }` it rides in the caller's transaction (the flow, its steps and its root
 * jobs are invisible until commit and gone after a rollback); and what a start and a release write, column by
 * column (steps and jobs go as typed column arrays, internal/flow-store.ts: every column must land on its own row,
 * the jsonb ones read by position, and free text an array literal could misread must stay text).
 */
import { Soniq } from "@soniq/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let pool: pg.Pool;
let soniq: Soniq<ReturnType<typeof postgresBackend>>;

beforeAll(async () => {
  db = await createMigratedDatabase();
  pool = new pg.Pool({ connectionString: db.url });
  pool.on("error", () => {});
  soniq = new Soniq({ backend: postgresBackend({ pool }) });
  soniq.job("orders.charge", async () => null);
  soniq.job("orders.ship", async () => null);
  soniq.job("shop.step", async () => null);
  soniq.job("shop.retry", async () => null, { maxAttempts: 7 });
});
afterAll(async () => {
  await soniq?.close();
  await pool?.end();
  await db?.drop();
});

const count = async (table: string, flowId: string) =>
  Number(
    (
      await pool.query(
        `SELECT COUNT(*) AS n FROM ${table} WHERE ${table === "soniq_flows" ? "id" : "flow_id"} = $1`,
        [flowId],
      )
    ).rows[0].n,
  );
const steps = { charge: { job: "orders.charge" }, ship: { job: "orders.ship", dependsOn: ["charge"] } };

describe("flows/tx on Postgres", () => {
  it("flows/tx-commit: invisible until the caller commits, then the flow, its steps and its root job", async () => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const { id } = await soniq.flows.start({ steps }, { tx: client });
      expect(await count("soniq_flows", id)).toBe(0);
      await client.query("COMMIT");
      expect(await count("soniq_flows", id)).toBe(1);
      expect(await count("soniq_flow_steps", id)).toBe(2);
      expect(await count("soniq_jobs", id)).toBe(1);
    } finally {
      client.release();
    }
  });

  it("flows/tx-rollback: nothing remains after the caller's rollback", async () => {
    const client = await pool.connect();
    let id = "";
    try {
      await client.query("BEGIN");
      id = (await soniq.flows.start({ steps }, { tx: client })).id;
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(await count("soniq_flows", id)).toBe(0);
    expect(await count("soniq_flow_steps", id)).toBe(0);
    expect(await count("soniq_jobs", id)).toBe(0);
  });
});

describe("flows on Postgres: what a start writes", () => {
  it("flows/columns: each step's row and each root job's row hold that step's own values", async () => {
    const group = 'a "quoted" \\ {group}, NULL';
    const { id } = await soniq.flows.start({
      steps: {
        a: { job: "shop.retry", args: null, options: { group, priority: 5 } },
        b: { job: "shop.step", args: "text, {not an array}", options: { group: "NULL", delayMs: 3_600_000 } },
        c: { job: "shop.step", args: [1, { x: null }] },
        d: { job: "shop.step", args: { n: 4 }, dependsOn: ["a", "b"], onParentFailure: "run" },
      },
    });
    const jobs = await pool.query(
      `SELECT step_ref, args, "group", priority, max_attempts, scheduled_at > now() + interval '50 minutes' AS later,
         flow_id::text AS flow FROM soniq_jobs WHERE flow_id = $1 ORDER BY step_ref`,
      [id],
    );
    expect(jobs.rows).toEqual([
      { step_ref: "a", args: null, group, priority: 5, max_attempts: 7, later: false, flow: id },
      {
        step_ref: "b",
        args: "text, {not an array}",
        group: "NULL",
        priority: 100,
        max_attempts: 3,
        later: true,
        flow: id,
      },
      {
        step_ref: "c",
        args: [1, { x: null }],
        group: null,
        priority: 100,
        max_attempts: 3,
        later: false,
        flow: id,
      },
    ]);
    const steps = await pool.query(
      `SELECT ref, seq, depends_on, dependents, state, pending_parents, on_parent_failure, job_id::text AS job_id,
         job_ids, job_name FROM soniq_flow_steps WHERE flow_id = $1 ORDER BY seq`,
      [id],
    );
    expect(
      steps.rows.map((r) => [r.ref, r.seq, r.depends_on, r.dependents, r.state, r.pending_parents]),
    ).toEqual([
      ["a", 1, [], ["d"], "queued", 0],
      ["b", 2, [], ["d"], "queued", 0],
      ["c", 3, [], [], "queued", 0],
      ["d", 4, ["a", "b"], [], "waiting", 2],
    ]);
    expect(steps.rows[3].on_parent_failure).toBe("run");
    expect(steps.rows.map((r) => r.job_name)).toEqual(["shop.retry", "shop.step", "shop.step", "shop.step"]);
    for (const row of steps.rows) {
      expect(row.job_ids).toEqual([row.job_id]);
    }
  });
});

describe("flows on Postgres: what a release writes", () => {
  it("flows/saved-columns: finished and released steps keep their own state, reason, counter and finish time", async () => {
    soniq.job(
      "shop.fail",
      async () => {
        throw new Error("declined");
      },
      { maxAttempts: 1 },
    );
    const { id } = await soniq.flows.start({
      steps: {
        a: { job: "shop.step" },
        b: { job: "shop.step", dependsOn: ["a"] },
        c: { job: "shop.fail" },
        d: { job: "shop.step", dependsOn: ["c"], onParentFailure: "cancel" },
      },
    });
    await soniq.worker().runOnce();
    const steps = await pool.query(
      `SELECT ref, state, reason, pending_parents, finished_at IS NOT NULL AS finished, job_ids, job_id::text AS job_id FROM soniq_flow_steps
         WHERE flow_id = $1 ORDER BY ref`,
      [id],
    );
    expect(steps.rows.map((r) => [r.ref, r.state, r.reason, r.pending_parents, r.finished])).toEqual([
      ["a", "done", null, 0, true],
      ["b", "done", null, 0, true],
      ["c", "dead_lettered", null, 0, true],
      ["d", "cancelled", "parent_dead_lettered", 1, true],
    ]);
    for (const row of steps.rows) expect(row.job_ids).toEqual([row.job_id]);
  });
});
