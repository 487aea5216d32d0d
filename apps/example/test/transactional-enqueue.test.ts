/**
 * The app's POST /orders guarantee, on both SQL backends: the order row and its jobs commit together,
 * and a failure inside the transaction leaves neither.
 */
import type { EnqueueResult } from "@soniq/core/backend";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSoniq } from "../src/app.js";
import type { DatabaseTarget } from "../src/database.js";
import { createPostgresDatabase, tempDir } from "./support.js";

const order = { customer: "Ada", email: "ada@example.com", totalCents: 100 };

function suite(kind: string, target: () => DatabaseTarget) {
  it(`example/tx-commit-${kind}: the order and its four jobs commit together`, async () => {
    const { db, soniq, jobs } = await openSoniq(target());
    try {
      const { order: created, enqueued } = await db.orders.create(order, jobs.enqueueForNewOrder);
      expect(await db.orders.get(created.id)).toMatchObject({ customer: "Ada" });
      expect(enqueued).toHaveLength(4);
      const rows = await Promise.all(enqueued.map((r) => soniq.jobs.get(r.id)));
      expect(rows.map((j) => j?.jobName).sort()).toEqual([
        "orders.email_receipt",
        "orders.request_review",
        "orders.reserve_stock",
        "orders.send_invoice",
      ]);
      for (const row of rows) expect(row).toMatchObject({ status: "queued", args: { orderId: created.id } });
    } finally {
      await soniq.close();
      await db.close();
    }
  });

  it(`example/tx-rollback-${kind}: a failure after the enqueue rolls back the order and the jobs`, async () => {
    const { db, soniq, jobs } = await openSoniq(target());
    try {
      const before = await soniq.jobs.stats();
      const ordersBefore = (await db.orders.list(100)).length;
      let started: Promise<EnqueueResult[]> | undefined;
      const failing = db.orders.create(order, (tx, orderId) => {
        started = jobs.enqueueForNewOrder(tx, orderId);
        // Something later in the same transaction fails (after the jobs were written to it).
        throw new Error("payment declined");
      });
      await expect(failing).rejects.toThrow("payment declined");
      // The enqueue itself went through inside the transaction; the rollback removed what it wrote.
      const written = await (started as Promise<EnqueueResult[]>);
      for (const { id } of written) expect(await soniq.jobs.get(id)).toBeNull();
      expect(written).toHaveLength(4);
      expect(await db.orders.list(100)).toHaveLength(ordersBefore);
      expect(await soniq.jobs.stats()).toEqual(before);
    } finally {
      await soniq.close();
      await db.close();
    }
  });
}

describe("example/transactional enqueue on SQLite", () => {
  const dir = tempDir();
  const file = dir.file();
  afterAll(() => dir.remove());
  suite("sqlite", () => ({ kind: "sqlite", location: file }));
});

describe("example/transactional enqueue on PostgreSQL", () => {
  let url = "";
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ url, drop } = await createPostgresDatabase());
  }, 30_000);
  afterAll(() => drop(), 30_000);
  suite("postgres", () => ({ kind: "postgres", location: url }));
});
