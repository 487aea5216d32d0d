/**
 * `flows.start(definition, { tx })` on Postgres rides in the caller's transaction: the flow, its steps and
 * its root jobs are invisible until commit and gone after a rollback.
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
