/**
 * `runs.settle`: any mix of done / requeue / dead_letter in one IMMEDIATE transaction, each item fenced
 * by (id, attempt), one boolean per item in input order. Also what the claim hands back now that core,
 * not the backend, dead-letters jobs claimed past their attempts.
 */
import { sqliteBackendWithFaults } from "@soniq/backend-sqlite/testing";
import type { Job, RequeueSettlement, Settlement } from "@soniq/core/backend";
import { newJob } from "@soniq/testkit";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SqliteBackend } from "../src/index.js";
import { tempDir, worker } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let file: string;
let backend: SqliteBackend;
let interrupt: (id: string) => boolean;
beforeEach(async () => {
  file = tmp.file();
  interrupt = () => false;
  backend = sqliteBackendWithFaults(
    { filename: file },
    {},
    { interruptDeadLetterMove: (id) => interrupt(id) },
  );
  await backend.migrations.apply();
  await backend.workers.register(worker("w"));
});
afterEach(() => backend.close());

/** Enqueue `count` jobs and claim them as worker "w", in enqueue order. */
async function claimed(count: number, overrides = {}): Promise<Job[]> {
  const jobs = Array.from({ length: count }, (_, i) => newJob({ priority: i, ...overrides }));
  await backend.jobs.enqueueMany(jobs, {});
  const taken = (await backend.runs.claim({ queues: null, limit: count, workerId: "w" })).jobs;
  expect(taken.map((j) => j.id)).toEqual(jobs.map((j) => j.id));
  return taken;
}

const ref = (job: Job) => ({ id: job.id, attempt: job.attempts });
const done = (job: Job, resultTtlMs = 60_000): Settlement => ({
  ...ref(job),
  kind: "done",
  result: { ok: 1 },
  resultTtlMs,
});
const requeue = (job: Job, over: Partial<RequeueSettlement> = {}): RequeueSettlement => ({
  ...ref(job),
  kind: "requeue",
  cause: "retry",
  attempts: job.attempts,
  delayMs: 0,
  lastError: "boom",
  ...over,
});
const deadLetter = (job: Job): Settlement => ({
  ...ref(job),
  kind: "dead_letter",
  reason: "permanent_failure",
  error: "fatal",
  tags: { team: "a" },
});

function insertDeadLetterRow(id: string): void {
  const db = new Database(file);
  db.prepare(
    `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
      last_error, dead_letter_reason, original_created_at) VALUES (?, 'x', '{}', 'q', 1, 3, 3, 'old', 'x', 0)`,
  ).run(id);
  db.close();
}

describe("sqlite/settle", () => {
  it("writes a mixed batch and answers per item, in input order", async () => {
    const [a, b, c] = await claimed(3);
    if (!a || !b || !c) throw new Error("expected three jobs");
    const results = await backend.runs.settle([
      requeue(b),
      { id: newJob().id, attempt: 1, kind: "done", result: null, resultTtlMs: 1000 },
      deadLetter(c),
      done(a),
    ]);
    expect(results).toEqual([true, false, true, true]);
    expect(await backend.jobs.get(a.id)).toMatchObject({ status: "done", result: { ok: 1 } });
    expect(await backend.jobs.get(b.id)).toMatchObject({ status: "queued", lastError: "boom" });
    expect(await backend.jobs.get(c.id)).toBeNull();
    expect(await backend.deadLetters.get(c.id)).toMatchObject({
      deadLetterReason: "permanent_failure",
      lastError: "fatal",
      tags: { team: "a" },
      attempts: 1,
    });
    expect(await backend.runs.settle([])).toEqual([]);
  });

  it("is one transaction: an interrupted dead-letter move rejects the call and rolls back every item", async () => {
    const [a, b, c] = await claimed(3);
    if (!a || !b || !c) throw new Error("expected three jobs");
    interrupt = (id) => id === c.id;
    await expect(backend.runs.settle([done(a), requeue(b), deadLetter(c)])).rejects.toMatchObject({
      code: "SONIQ_BACKEND_ERROR",
      message: expect.stringMatching(/interrupted/),
    });
    for (const job of [a, b, c]) {
      expect(await backend.jobs.get(job.id)).toMatchObject({
        status: "processing",
        attempts: 1,
        workerId: "w",
      });
    }
    expect(await backend.deadLetters.get(c.id)).toBeNull();

    interrupt = () => false;
    expect(await backend.runs.settle([done(a), requeue(b), deadLetter(c)])).toEqual([true, true, true]);
    expect(await backend.deadLetters.get(c.id)).not.toBeNull();
  });

  it("applies nothing for an item whose fence does not match (wrong attempt, cancelled, repeated)", async () => {
    const [a, b, c] = await claimed(3);
    if (!a || !b || !c) throw new Error("expected three jobs");
    await backend.jobs.cancel(b.id);
    const stale = { ...a, attempts: a.attempts + 1 };
    const results = await backend.runs.settle([
      done(stale),
      requeue(stale),
      deadLetter(stale),
      done(b),
      deadLetter(b),
      done(c),
      requeue(c),
    ]);
    expect(results).toEqual([false, false, false, false, false, true, false]);
    expect(await backend.jobs.get(a.id)).toMatchObject({ status: "processing", lastError: null });
    expect((await backend.jobs.get(b.id))?.status).toBe("cancelled");
    expect((await backend.jobs.get(c.id))?.status).toBe("done");
    expect(await backend.deadLetters.get(a.id)).toBeNull();
  });

  it("skips a dead_letter item whose id already has a dead-letter row; the job row stays, the rest apply", async () => {
    const [a, b] = await claimed(2);
    if (!a || !b) throw new Error("expected two jobs");
    insertDeadLetterRow(a.id);
    expect(await backend.runs.settle([deadLetter(a), deadLetter(b)])).toEqual([false, true]);
    expect(await backend.jobs.get(a.id)).toMatchObject({ status: "processing", attempts: 1, workerId: "w" });
    expect(await backend.deadLetters.get(a.id)).toMatchObject({ lastError: "old", deadLetterReason: "x" });
    expect(await backend.jobs.get(b.id)).toBeNull();
    // The job is still the worker's to settle another way.
    expect(await backend.runs.settle([done(a)])).toEqual([true]);
  });

  it("done with resultTtlMs 0 deletes the row; otherwise stores the result until now + ttl", async () => {
    const [a, b] = await claimed(2);
    if (!a || !b) throw new Error("expected two jobs");
    const before = Date.now();
    expect(await backend.runs.settle([done(a, 0), done(b, 60_000)])).toEqual([true, true]);
    const after = Date.now();
    expect(await backend.jobs.get(a.id)).toBeNull();
    const kept = await backend.jobs.get(b.id);
    expect(kept).toMatchObject({ status: "done", result: { ok: 1 } });
    const expiresAt = kept?.expiresAt?.getTime() ?? 0;
    expect(expiresAt).toBeGreaterThanOrEqual(before + 60_000 - 1);
    expect(expiresAt).toBeLessThanOrEqual(after + 60_000 + 1);
  });

  it("requeue writes the item's attempts and lastError, clears worker_id and delays by delayMs", async () => {
    const [a, b] = await claimed(2);
    if (!a || !b) throw new Error("expected two jobs");
    const before = Date.now();
    const results = await backend.runs.settle([
      requeue(a, { cause: "snooze", attempts: 0, lastError: "SNOOZE: later", delayMs: 60_000 }),
      requeue(b, { cause: "nack", attempts: 1, lastError: null, delayMs: 0 }),
    ]);
    expect(results).toEqual([true, true]);
    const snoozed = await backend.jobs.get(a.id);
    expect(snoozed).toMatchObject({
      status: "queued",
      attempts: 0,
      lastError: "SNOOZE: later",
      workerId: null,
    });
    expect(snoozed?.scheduledAt.getTime()).toBeGreaterThanOrEqual(before + 60_000 - 1);
    expect(await backend.jobs.get(b.id)).toMatchObject({
      status: "queued",
      attempts: 1,
      lastError: null,
      workerId: null,
    });
    // Only the one due now is claimable.
    const again = (await backend.runs.claim({ queues: null, limit: 10, workerId: "w" })).jobs;
    expect(again.map((j) => [j.id, j.attempts])).toEqual([[b.id, 2]]);
  });

  it("a requeue with a null lastError keeps the stored one", async () => {
    const [a] = await claimed(1);
    if (!a) throw new Error("expected a job");
    expect(await backend.runs.settle([requeue(a, { lastError: "first failure" })])).toEqual([true]);
    const [again] = (await backend.runs.claim({ queues: null, limit: 1, workerId: "w" })).jobs;
    if (!again) throw new Error("expected the job again");
    expect(await backend.runs.settle([requeue(again, { cause: "nack", lastError: null })])).toEqual([true]);
    expect(await backend.jobs.get(a.id)).toMatchObject({ lastError: "first failure", attempts: 2 });
  });

  it("a requeue due now wakes this backend's subscribers after the commit", async () => {
    const [a, b] = await claimed(2, { queue: "mail" });
    if (!a || !b) throw new Error("expected two jobs");
    const heard: string[] = [];
    const unsubscribe = await backend.wakeUps.subscribe((queue) => heard.push(queue));
    await backend.runs.settle([requeue(a, { delayMs: 60_000 })]);
    await Promise.resolve();
    expect(heard).toEqual([]);
    await backend.runs.settle([requeue(b)]);
    await Promise.resolve();
    expect(heard).toEqual(["mail"]);
    await unsubscribe();
  });
});

describe("sqlite/claim past max_attempts", () => {
  it("returns a job whose attempts now exceed max_attempts, and everything else it took", async () => {
    const [tired] = await claimed(1, { maxAttempts: 1 });
    if (!tired) throw new Error("expected a job");
    expect(await backend.runs.settle([requeue(tired, { cause: "nack" })])).toEqual([true]);
    const fresh = newJob({ priority: 50 });
    await backend.jobs.enqueue(fresh, {});
    const batch = (await backend.runs.claim({ queues: ["default"], limit: 5, workerId: "w" })).jobs;
    expect(batch.map((j) => [j.id, j.attempts, j.maxAttempts])).toEqual([
      [tired.id, 2, 1],
      [fresh.id, 1, 3],
    ]);
    expect(await backend.deadLetters.get(tired.id)).toBeNull();
  });
});
