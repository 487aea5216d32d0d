/**
 * `runs.settle` and its webhook outbox (issue 43): an applied item's deliveries are inserted inside the
 * settle's transaction, so a delivery insert that fails takes the whole settle with it. Were the insert made
 * after the commit, the job would end `done` with its event lost. The failure is a trigger the test adds to
 * `soniq_webhook_deliveries` (on its own connection to the same file) that refuses the insert.
 */
import { randomUUID } from "node:crypto";
import { auditRecord, type Job, type NewWebhookDelivery, type Settlement } from "@soniq/core/backend";
import { newJob } from "@soniq/testkit";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SqliteBackend } from "../src/index.js";
import { migrated, tempDir, worker } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let file: string;
let backend: SqliteBackend;
let endpointId: string;
beforeEach(async () => {
  file = tmp.file();
  backend = await migrated(file);
  await backend.workers.register(worker("w"));
  endpointId = randomUUID();
  const at = new Date();
  await backend.webhooks.createEndpoint(
    {
      id: endpointId,
      url: "https://hooks.example.com/soniq",
      events: ["job.completed", "job.dead_letter", "job.retried"],
      headers: {},
      description: null,
      active: true,
      maxAttempts: 3,
      timeoutMs: 5000,
      retry: { backoff: "exponential", delayMs: 10_000, maxDelayMs: 600_000, jitter: true },
      secretCipher: "v1.iv.tag.body",
      createdAt: at,
      updatedAt: at,
    },
    auditRecord("webhook.register", "test", endpointId, null),
  );
});
afterEach(() => backend.close());

/** From now on, every insert into the deliveries table fails (as a full disk or a crash mid-write would). */
function refuseDeliveryInserts(): void {
  const db = new Database(file);
  db.exec(`CREATE TRIGGER test_refuse_delivery BEFORE INSERT ON soniq_webhook_deliveries
    BEGIN SELECT RAISE(ABORT, 'delivery insert refused by the test'); END`);
  db.close();
}

function delivery(event: NewWebhookDelivery["event"]): NewWebhookDelivery {
  return {
    id: randomUUID(),
    endpointId,
    event,
    payload: { event, timestamp: "2026-01-01T00:00:00.000Z", data: {}, metadata: {} },
    maxAttempts: 3,
  };
}

async function claimed(count: number): Promise<Job[]> {
  const jobs = Array.from({ length: count }, (_, i) => newJob({ priority: i }));
  await backend.jobs.enqueueMany(jobs, {});
  const taken = (await backend.runs.claim({ queues: null, limit: count, workerId: "w" })).jobs;
  expect(taken.map((j) => j.id)).toEqual(jobs.map((j) => j.id));
  return taken;
}

async function deliveryCount(): Promise<number> {
  const rows = await backend.webhooks.listDeliveries({ endpointId, status: null, event: null, limit: 1000 });
  return rows.length;
}

describe("sqlite/settle-outbox", () => {
  it("sqlite/settle-outbox-insert-fails-settle-applies-nothing: when a delivery cannot be inserted, the settle rejects and leaves every job of the batch processing", async () => {
    const [a, b, c] = await claimed(3);
    if (!a || !b || !c) throw new Error("expected three jobs");
    refuseDeliveryInserts();
    const items: Settlement[] = [
      // No delivery of its own: it must still roll back with the batch.
      { kind: "done", id: a.id, attempt: a.attempts, result: { ok: 1 }, resultTtlMs: 60_000 },
      {
        kind: "done",
        id: b.id,
        attempt: b.attempts,
        result: { ok: 2 },
        resultTtlMs: 60_000,
        deliveries: [delivery("job.completed")],
      },
      {
        kind: "dead_letter",
        id: c.id,
        attempt: c.attempts,
        reason: "permanent_failure",
        error: "fatal",
        tags: null,
        deliveries: [delivery("job.dead_letter")],
      },
    ];
    await expect(backend.runs.settle(items, "w")).rejects.toThrow();
    for (const job of [a, b, c]) {
      const row = await backend.jobs.get(job.id);
      expect(row && [row.status, row.attempts, row.workerId, row.result]).toEqual([
        "processing",
        1,
        "w",
        null,
      ]);
    }
    expect(await backend.deadLetters.get(c.id)).toBeNull();
    expect(await deliveryCount()).toBe(0);
  });

  it("sqlite/settle-outbox-retry-after-failed-insert: once inserts work again, the same settle applies with its deliveries", async () => {
    const [job] = await claimed(1);
    if (!job) throw new Error("expected a job");
    refuseDeliveryInserts();
    const item: Settlement = {
      kind: "done",
      id: job.id,
      attempt: job.attempts,
      result: null,
      resultTtlMs: 60_000,
      deliveries: [delivery("job.completed")],
    };
    await expect(backend.runs.settle([item], "w")).rejects.toThrow();
    expect((await backend.jobs.get(job.id))?.status).toBe("processing");
    const db = new Database(file);
    db.exec("DROP TRIGGER test_refuse_delivery");
    db.close();
    expect(await backend.runs.settle([item], "w")).toEqual([true]);
    expect((await backend.jobs.get(job.id))?.status).toBe("done");
    expect(await deliveryCount()).toBe(1);
  });
});
