/**
 * `flows.start(definition, { tx })` on SQLite joins the caller's open better-sqlite3 transaction: the flow,
 * its steps and its root jobs commit with it and are gone with its rollback (written before the call's
 * promise is returned: the caller does not await inside the transaction).
 */
import { Soniq } from "@soniq/core";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let db: Database.Database;
let soniq: Soniq<ReturnType<typeof sqliteBackend>>;
beforeEach(async () => {
  db = new Database(tmp.file());
  soniq = new Soniq({ backend: sqliteBackend({ database: db }) });
  await soniq.setup();
  soniq.job("orders.charge", async () => null);
  soniq.job("orders.ship", async () => null);
});
afterEach(async () => {
  await soniq.close();
  db.close();
});

const rows = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
const steps = { charge: { job: "orders.charge" }, ship: { job: "orders.ship", dependsOn: ["charge"] } };

describe("flows/tx on SQLite", () => {
  it("flows/tx-commit: the flow, its steps and its root job commit with the caller's transaction", async () => {
    let pending: Promise<{ id: string }> | undefined;
    db.transaction(() => {
      pending = soniq.flows.start({ steps }, { tx: db });
      expect(rows("soniq_flows")).toBe(1);
    })();
    const { id } = (await pending) as { id: string };
    expect(rows("soniq_flow_steps")).toBe(2);
    expect(rows("soniq_jobs")).toBe(1);
    expect((await soniq.flows.get(id))?.state).toBe("running");
  });

  it("flows/tx-rollback: nothing remains after the caller's rollback", async () => {
    let pending: Promise<unknown> | undefined;
    expect(() =>
      db.transaction(() => {
        pending = soniq.flows.start({ steps }, { tx: db });
        throw new Error("the order failed");
      })(),
    ).toThrow("the order failed");
    await pending;
    expect(rows("soniq_flows")).toBe(0);
    expect(rows("soniq_flow_steps")).toBe(0);
    expect(rows("soniq_jobs")).toBe(0);
  });
});
