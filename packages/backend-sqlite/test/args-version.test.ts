/**
 * Versions of a job's arguments (DESIGN.md section 20) on SQLite: `args_version` is stored as core gives it
 * (null: unversioned) by every insert (enqueue, enqueueMany in chunks and row by row, inside the caller's `tx`,
 * a flow's jobs), read back by get, list and claim, kept by the dead-letter move, and copied by a replay; the
 * task registry keeps each (task, worker)'s version, a re-registration replacing it.
 */
import type { Job, NewFlowStep, NewJob } from "@soniq/core/backend";
import { newJob, uniqueQueue } from "@soniq/testkit";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SqliteBackend, sqliteBackend } from "../src/index.js";
import { ROWS_PER_INSERT } from "../src/internal/enqueue.js";
import { tempDir, worker } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let db: Database.Database;
let backend: SqliteBackend;
beforeEach(async () => {
  db = new Database(tmp.file());
  backend = sqliteBackend({ database: db });
  await backend.migrations.apply();
  await backend.workers.register(worker("w"));
});
afterEach(async () => {
  await backend.close();
  db.close();
});

/** The stored column, read past the backend's mapping. */
const stored = (table: "soniq_jobs" | "soniq_dead_letter_jobs", id: string) =>
  (
    db.prepare(`SELECT args_version FROM ${table} WHERE id = ?`).get(id) as
      | { args_version: unknown }
      | undefined
  )?.args_version;

/** Jobs of one queue alternating unversioned and version 3 (and 1 + i % 5 when `varied`). */
function versioned(queue: string, count: number, varied = false): NewJob[] {
  return Array.from({ length: count }, (_, i) =>
    newJob({ queue, argsVersion: i % 2 === 0 ? null : varied ? 1 + (i % 5) : 3, args: { i } }),
  );
}

async function claimAll(queue: string, limit: number): Promise<Job[]> {
  return (await backend.runs.claim({ queues: [queue], limit, workerId: "w" })).jobs;
}

describe("args_version on enqueue and reads", () => {
  it("stores null and 3 through enqueue, and get, list and claim return them", async () => {
    const queue = uniqueQueue();
    const [plain, v3] = [newJob({ queue, argsVersion: null }), newJob({ queue, argsVersion: 3 })];
    for (const job of [plain, v3]) await backend.jobs.enqueue(job, {});
    expect(stored("soniq_jobs", plain.id)).toBeNull();
    expect(stored("soniq_jobs", v3.id)).toBe(3);
    expect((await backend.jobs.get(plain.id))?.argsVersion).toBeNull();
    expect((await backend.jobs.get(v3.id))?.argsVersion).toBe(3);
    const listed = await backend.jobs.list({
      statuses: null,
      queue,
      jobName: null,
      q: null,
      ids: null,
      limit: 10,
      offset: 0,
      position: null,
    });
    expect(new Map(listed.map((j) => [j.id, j.argsVersion]))).toEqual(
      new Map([
        [plain.id, null],
        [v3.id, 3],
      ]),
    );
    const claimed = await claimAll(queue, 10);
    expect(new Map(claimed.map((j) => [j.id, j.argsVersion]))).toEqual(
      new Map([
        [plain.id, null],
        [v3.id, 3],
      ]),
    );
  });

  it("stores each row's version through enqueueMany: a plain batch's full chunks and rest, and a keyed batch", async () => {
    const queue = uniqueQueue();
    const plain = versioned(queue, 2 * ROWS_PER_INSERT + 3, true);
    await backend.jobs.enqueueMany(plain, {});
    // Keyed rows take the row-by-row path (a dedup key can conflict).
    const keyed = versioned(queue, 4).map((job, i) => ({ ...job, dedupKey: `k-${queue}-${i}` }));
    await backend.jobs.enqueueMany(keyed, {});
    for (const job of [...plain, ...keyed]) expect(stored("soniq_jobs", job.id)).toBe(job.argsVersion);
    const claimed = await claimAll(queue, 1000);
    expect(claimed).toHaveLength(plain.length + keyed.length);
    const want = new Map([...plain, ...keyed].map((j) => [j.id, j.argsVersion]));
    expect(new Map(claimed.map((j) => [j.id, j.argsVersion]))).toEqual(want);
  });

  it("stores the version inside the caller's transaction (better-sqlite3 and Drizzle)", async () => {
    const queue = uniqueQueue();
    const [a, b] = [newJob({ queue, argsVersion: 3 }), newJob({ queue, argsVersion: null })];
    const [c, d] = [newJob({ queue, argsVersion: 3 }), newJob({ queue, argsVersion: null })];
    let pending: Promise<unknown>[] = [];
    db.transaction(() => {
      pending = [backend.jobs.enqueue(a, { tx: db }), backend.jobs.enqueueMany([b, c], { tx: db })];
    })();
    await Promise.all(pending);
    const orm = drizzle({ client: db });
    orm.transaction((tx) => {
      pending = [backend.jobs.enqueue(d, { tx })];
    });
    await Promise.all(pending);
    for (const job of [a, b, c, d]) {
      expect((await backend.jobs.get(job.id))?.argsVersion).toBe(job.argsVersion);
    }
  });

  it("a deduplicated enqueue keeps the first row's version", async () => {
    const queue = uniqueQueue();
    const first = newJob({ queue, dedupKey: `k-${queue}`, argsVersion: 2 });
    await backend.jobs.enqueue(first, {});
    const again = await backend.jobs.enqueue(newJob({ queue, dedupKey: `k-${queue}`, argsVersion: 3 }), {});
    expect(again).toEqual({ id: first.id, deduplicated: true });
    expect((await backend.jobs.get(first.id))?.argsVersion).toBe(2);
  });
});

describe("args_version through the dead-letter move and replay", () => {
  it("the move keeps the version and a replay copies it to the new job", async () => {
    const queue = uniqueQueue();
    const jobs = [newJob({ queue, argsVersion: null }), newJob({ queue, argsVersion: 3 })];
    await backend.jobs.enqueueMany(jobs, {});
    const claimed = await claimAll(queue, 10);
    const applied = await backend.runs.settle(
      claimed.map((job) => ({
        id: job.id,
        attempt: job.attempts,
        kind: "dead_letter" as const,
        reason: "permanent_failure",
        error: "fatal",
        tags: null,
      })),
      "w",
    );
    expect(applied).toEqual([true, true]);
    for (const job of jobs) {
      expect(stored("soniq_dead_letter_jobs", job.id)).toBe(job.argsVersion);
      expect((await backend.deadLetters.get(job.id))?.argsVersion).toBe(job.argsVersion);
    }
    const listed = await backend.deadLetters.list({
      jobName: null,
      queue,
      reason: null,
      since: null,
      until: null,
      q: null,
      ids: null,
      limit: 10,
      offset: 0,
      position: null,
    });
    expect(new Map(listed.map((d) => [d.id, d.argsVersion]))).toEqual(
      new Map(jobs.map((j) => [j.id, j.argsVersion])),
    );

    for (const job of jobs) {
      const newId = newJob().id;
      const replayed = await backend.deadLetters.replay(job.id, {
        newId,
        queue: null,
        priority: null,
        scheduledAt: null,
        traceId: null,
        traceContext: null,
      });
      expect(replayed).toBe(newId);
      expect(await backend.jobs.get(newId)).toMatchObject({
        jobName: job.jobName,
        args: job.args,
        argsVersion: job.argsVersion,
      });
    }
  });

  it("a job claimed past its attempts and dead-lettered keeps its version", async () => {
    const queue = uniqueQueue();
    const job = newJob({ queue, argsVersion: 3, maxAttempts: 1 });
    await backend.jobs.enqueue(job, {});
    const [first] = await claimAll(queue, 1);
    if (!first) throw new Error("expected the job");
    // The worker died: stale recovery requeues it (attempts unchanged), the next claim is past max_attempts.
    await backend.workers.stop("w");
    expect((await backend.workers.recoverStale(60_000)).requeuedJobIds).toEqual([job.id]);
    await backend.workers.register(worker("w"));
    const [again] = await claimAll(queue, 1);
    expect(again).toMatchObject({ id: job.id, attempts: 2, argsVersion: 3 });
    if (!again) throw new Error("expected the job");
    await backend.runs.settle(
      [
        {
          id: job.id,
          attempt: again.attempts,
          kind: "dead_letter",
          reason: "max_retries_exceeded",
          error: "past max attempts",
          tags: null,
        },
      ],
      "w",
    );
    expect((await backend.deadLetters.get(job.id))?.argsVersion).toBe(3);
  });
});

describe("args_version of a flow's jobs", () => {
  it("a root job and its released dependents keep their step's version", async () => {
    const queue = uniqueQueue();
    const flowId = newJob().id;
    const step = (ref: string, argsVersion: number | null, dependsOn: string[]): NewFlowStep => ({
      ref,
      job: newJob({ queue, jobName: `flow.${ref}`, argsVersion, flowId, stepRef: ref }),
      dependsOn,
      onParentFailure: "cancel",
      addedBy: null,
    });
    const root = step("root", 3, []);
    const child = step("child", 2, ["root"]);
    const legacy = step("legacy", 5, ["root"]);
    await backend.flows.start(
      { id: flowId, name: null, createdBy: "test", steps: [root, child, legacy] },
      {},
    );
    // A step stored before versions existed has no argsVersion in its JSON: its job is unversioned.
    const { job } = db
      .prepare("SELECT job FROM soniq_flow_steps WHERE flow_id = ? AND ref = 'legacy'")
      .get(flowId) as { job: string };
    const { argsVersion: _, ...withoutVersion } = JSON.parse(job) as Record<string, unknown>;
    db.prepare("UPDATE soniq_flow_steps SET job = ? WHERE flow_id = ? AND ref = 'legacy'").run(
      JSON.stringify(withoutVersion),
      flowId,
    );

    const [rootJob, ...none] = await claimAll(queue, 10);
    expect(none).toEqual([]);
    expect(rootJob).toMatchObject({ id: root.job.id, argsVersion: 3 });
    if (!rootJob) throw new Error("expected the root job");
    await backend.runs.settle(
      [
        {
          id: rootJob.id,
          attempt: rootJob.attempts,
          kind: "done",
          result: null,
          resultTtlMs: 60_000,
          flow: { flowId, stepRef: "root", add: [] },
        },
      ],
      "w",
    );
    const released = await claimAll(queue, 10);
    expect(new Map(released.map((j) => [j.id, j.argsVersion]))).toEqual(
      new Map([
        [child.job.id, 2],
        [legacy.job.id, null],
      ]),
    );
  });
});

describe("task registry versions", () => {
  it("stores and lists each task's version; registering again replaces it", async () => {
    await backend.workers.register(worker("w2"));
    await backend.workers.registerTaskNames("w", [
      { name: "emails.send", version: 3 },
      { name: "reports.build", version: null },
    ]);
    await backend.workers.registerTaskNames("w2", [{ name: "emails.send", version: 2 }]);
    const versions = async () =>
      (await backend.workers.listTaskNames()).map((t) => [t.taskName, t.workerId, t.version]);
    expect(await versions()).toEqual([
      ["emails.send", "w", 3],
      ["emails.send", "w2", 2],
      ["reports.build", "w", null],
    ]);
    // The worker restarted with a newer handler (and one that dropped its version): replaced, not added.
    await backend.workers.registerTaskNames("w2", [{ name: "emails.send", version: 4 }]);
    await backend.workers.registerTaskNames("w", [{ name: "emails.send", version: null }]);
    expect(await versions()).toEqual([
      ["emails.send", "w", null],
      ["emails.send", "w2", 4],
      ["reports.build", "w", null],
    ]);
  });
});
