/**
 * Versions of a job's arguments on PostgreSQL (DESIGN.md section 20): `args_version` stored as given (null: an
 * unversioned job) by every enqueue path (one job, a plain batch, a keyed batch, on the pool and in a caller's
 * transaction, a flow's jobs), read back by get, list and claim (both claim paths), kept by every dead-letter move
 * (settle, a claim past max attempts, a flow step's, the test seam's interrupted move) and copied by a replay; the
 * task registry stores and lists each (task name, worker)'s version, replaced when re-registered. Each test has a
 * database of its own; without PostgreSQL the tests fail.
 */
import { randomUUID } from "node:crypto";
import { postgresBackendWithFaults } from "@soniq/backend-postgres/testing";
import { Soniq } from "@soniq/core";
import {
  auditRecord,
  type DeadLetterSettlement,
  type Job,
  type JobListQuery,
  type NewJob,
  type ReplayRequest,
  type Settlement,
} from "@soniq/core/backend";
import { uniqueQueue } from "@soniq/testkit";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PostgresBackend, postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, registerWorker, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let pool: pg.Pool;
let backend: PostgresBackend;

beforeEach(async () => {
  db = await createMigratedDatabase();
  pool = new pg.Pool({ connectionString: db.url });
  // pool.end() resolves before its sockets close; DROP DATABASE ... WITH (FORCE) may then kill them.
  pool.on("error", () => {});
  backend = postgresBackend({ pool });
});
afterEach(async () => {
  await backend?.close();
  await pool?.end();
  await db?.drop();
});

/** The stored column itself, not a mapper's reading of it. */
async function storedVersion(table: string, id: string): Promise<number | null | undefined> {
  const res = await pool.query<{ args_version: number | null }>(
    `SELECT args_version FROM ${table} WHERE id = $1`,
    [id],
  );
  return res.rows[0]?.args_version;
}

const jobVersion = (id: string) => storedVersion("soniq_jobs", id);
const deadVersion = (id: string) => storedVersion("soniq_dead_letter_jobs", id);

/** `newJob` with the version set (the testkit's helper may not know the field). */
const versioned = (argsVersion: number | null, overrides: Partial<NewJob> = {}): NewJob =>
  newJob({ ...overrides, argsVersion });

const listQuery = (queue: string): JobListQuery => ({
  statuses: null,
  queue,
  jobName: null,
  q: null,
  ids: null,
  limit: 100,
  offset: 0,
  position: null,
});

const replayRequest = (overrides: Partial<ReplayRequest> = {}): ReplayRequest => ({
  newId: randomUUID(),
  queue: null,
  priority: null,
  scheduledAt: null,
  traceId: null,
  traceContext: null,
  ...overrides,
});

function deadLetter(job: Job): DeadLetterSettlement {
  return {
    kind: "dead_letter",
    id: job.id,
    attempt: job.attempts,
    reason: "permanent_failure",
    error: "boom",
    tags: null,
  };
}

/** Every job of `queue` claimed (by the plain claim), by id. */
async function claimAll(queue: string, b: PostgresBackend = backend): Promise<Map<string, Job>> {
  const { jobs } = await b.runs.claim({ queues: [queue], limit: 100, workerId: null });
  return new Map(jobs.map((job) => [job.id, job]));
}

describe("enqueue stores args_version as given", () => {
  it("one job: null and 3, plain, dedup-keyed, unique and both keys", async () => {
    const queue = uniqueQueue();
    const jobs = [
      versioned(null, { queue }),
      versioned(3, { queue }),
      versioned(3, { queue, dedupKey: `d-${randomUUID()}` }),
      versioned(null, { queue, dedupKey: `d-${randomUUID()}` }),
      versioned(3, { queue, unique: true, argsHash: `h-${randomUUID()}` }),
      versioned(3, { queue, unique: true, argsHash: `h-${randomUUID()}`, dedupKey: `d-${randomUUID()}` }),
    ];
    for (const job of jobs)
      expect(await backend.jobs.enqueue(job, {})).toEqual({ id: job.id, deduplicated: false });
    for (const job of jobs) {
      expect(await jobVersion(job.id)).toBe(job.argsVersion);
      expect((await backend.jobs.get(job.id))?.argsVersion).toBe(job.argsVersion);
    }
  });

  it("enqueueMany: a plain batch and a keyed batch, each row its own version (mixed, all null, all set)", async () => {
    const queue = uniqueQueue();
    const mixed = [versioned(3, { queue }), versioned(null, { queue }), versioned(7, { queue })];
    const allNull = [versioned(null, { queue }), versioned(null, { queue })];
    const allSet = [versioned(2, { queue }), versioned(2, { queue })];
    const keyed = [
      versioned(3, { queue, dedupKey: `d-${randomUUID()}` }),
      versioned(null, { queue }),
      versioned(5, { queue, unique: true, argsHash: `h-${randomUUID()}` }),
      versioned(null, { queue, unique: true, argsHash: `h-${randomUUID()}`, dedupKey: `d-${randomUUID()}` }),
    ];
    for (const batch of [mixed, allNull, allSet, keyed]) await backend.jobs.enqueueMany(batch, {});
    for (const job of [...mixed, ...allNull, ...allSet, ...keyed]) {
      expect(await jobVersion(job.id)).toBe(job.argsVersion);
    }
  });

  it("a caller's transaction: enqueue and enqueueMany (plain and keyed) store it on commit", async () => {
    const queue = uniqueQueue();
    const one = versioned(3, { queue });
    const oneNull = versioned(null, { queue, dedupKey: `d-${randomUUID()}` });
    const plain = [versioned(3, { queue }), versioned(null, { queue })];
    const keyed = [versioned(4, { queue, dedupKey: `d-${randomUUID()}` }), versioned(null, { queue })];
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await backend.jobs.enqueue(one, { tx: client });
      await backend.jobs.enqueue(oneNull, { tx: client });
      await backend.jobs.enqueueMany(plain, { tx: client });
      await backend.jobs.enqueueMany(keyed, { tx: client });
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    for (const job of [one, oneNull, ...plain, ...keyed])
      expect(await jobVersion(job.id)).toBe(job.argsVersion);
  });

  it("a NewJob without the field (a flow step's job stored before the column) is stored unversioned", async () => {
    const queue = uniqueQueue();
    const { argsVersion: _, ...bare } = versioned(3, { queue });
    const job = bare as NewJob;
    await backend.jobs.enqueue(job, {});
    const batch = [
      { ...job, id: randomUUID() },
      { ...job, id: randomUUID() },
    ];
    await backend.jobs.enqueueMany(batch, {});
    for (const j of [job, ...batch]) expect(await jobVersion(j.id)).toBeNull();
  });
});

describe("reads return args_version", () => {
  it("get, list and claim (the plain claim and the limited one)", async () => {
    // A limited queue takes the limited claim (internal/queue-limits.ts), which returns the same columns; limited
    // before the first claim, which caches the limited queues for a second.
    const limited = uniqueQueue("lim");
    await backend.queues.configure(
      limited,
      { concurrency: 10 },
      auditRecord("queue.configure", "test", limited, { concurrency: 10 }),
    );
    const queue = uniqueQueue();
    const jobs = [versioned(3, { queue }), versioned(null, { queue })];
    await backend.jobs.enqueueMany(jobs, {});
    const want = new Map(jobs.map((job) => [job.id, job.argsVersion]));

    for (const job of jobs) expect((await backend.jobs.get(job.id))?.argsVersion).toBe(job.argsVersion);
    const listed = await backend.jobs.list(listQuery(queue));
    expect(new Map(listed.map((job) => [job.id, job.argsVersion]))).toEqual(want);
    const claimed = await claimAll(queue);
    expect(new Map([...claimed.values()].map((job) => [job.id, job.argsVersion]))).toEqual(want);

    const more = [versioned(3, { queue: limited }), versioned(null, { queue: limited })];
    await backend.jobs.enqueueMany(more, {});
    const worker = randomUUID();
    await registerWorker(backend, worker);
    const taken = await backend.runs.claim({ queues: [limited], limit: 10, workerId: worker });
    expect(new Map(taken.jobs.map((job) => [job.id, job.argsVersion]))).toEqual(
      new Map(more.map((job) => [job.id, job.argsVersion])),
    );
  });
});

describe("the dead-letter move keeps args_version, a replay copies it", () => {
  it("settle's move, then replay (with and without a queue override)", async () => {
    const queue = uniqueQueue();
    const jobs = [versioned(3, { queue }), versioned(null, { queue })];
    await backend.jobs.enqueueMany(jobs, {});
    const claimed = [...(await claimAll(queue)).values()];
    expect(await backend.runs.settle(claimed.map(deadLetter))).toEqual([true, true]);
    for (const job of jobs) {
      expect(await deadVersion(job.id)).toBe(job.argsVersion);
      expect((await backend.deadLetters.get(job.id))?.argsVersion).toBe(job.argsVersion);
    }
    const dead = await backend.deadLetters.list({
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
    expect(new Map(dead.map((d) => [d.id, d.argsVersion]))).toEqual(
      new Map(jobs.map((job) => [job.id, job.argsVersion])),
    );

    const [three, none] = jobs as [NewJob, NewJob];
    const again = replayRequest({ queue: uniqueQueue() });
    expect(await backend.deadLetters.replay(three.id, again)).toBe(again.newId);
    expect(await jobVersion(again.newId)).toBe(3);
    expect((await backend.jobs.get(again.newId))?.argsVersion).toBe(3);
    const plain = replayRequest();
    expect(await backend.deadLetters.replay(none.id, plain)).toBe(plain.newId);
    expect(await jobVersion(plain.newId)).toBeNull();
    // A replayed job dead-letters again with the same version.
    const [replayed] = [...(await claimAll(again.queue as string)).values()];
    expect(replayed?.argsVersion).toBe(3);
    await backend.runs.settle([deadLetter(replayed as Job)]);
    expect(await deadVersion(again.newId)).toBe(3);
  });

  it("a claim past max attempts, dead-lettered by settle, keeps it", async () => {
    const queue = uniqueQueue();
    const job = versioned(3, { queue, maxAttempts: 1 });
    await backend.jobs.enqueue(job, {});
    const first = (await claimAll(queue)).get(job.id) as Job;
    // The claim's increment kept (as a crash recovery would leave it), due now: the next claim is past the max.
    const requeue: Settlement = {
      kind: "requeue",
      id: job.id,
      attempt: first.attempts,
      cause: "retry",
      attempts: first.attempts,
      delayMs: 0,
      lastError: "crashed",
    };
    expect(await backend.runs.settle([requeue])).toEqual([true]);
    const over = (await claimAll(queue)).get(job.id) as Job;
    expect(over.attempts).toBeGreaterThan(over.maxAttempts);
    expect(over.argsVersion).toBe(3);
    expect(await backend.runs.settle([deadLetter(over)])).toEqual([true]);
    expect((await backend.deadLetters.get(job.id))?.argsVersion).toBe(3);
  });

  it("the interrupted-move seam's transaction (testing entry) keeps it", async () => {
    const faulty = postgresBackendWithFaults({ pool }, undefined, {
      interruptDeadLetterMove: () => async () => {},
    });
    try {
      const queue = uniqueQueue();
      const job = versioned(3, { queue });
      await faulty.jobs.enqueue(job, {});
      const claimed = (await claimAll(queue, faulty)).get(job.id) as Job;
      expect(await faulty.runs.settle([deadLetter(claimed)])).toEqual([true]);
      expect(await deadVersion(job.id)).toBe(3);
    } finally {
      await faulty.close();
    }
  });

  it("a flow step's job: stored by the flow's start, kept by its move, copied by the step's replay", async () => {
    const soniq = new Soniq({ backend: postgresBackend({ pool }) });
    try {
      soniq.job("versions.step", async () => null, { version: 3 });
      const { id: flowId } = await soniq.flows.start({
        steps: { a: { job: "versions.step", args: { n: 1 } } },
      });
      const row = (
        await pool.query<{ id: string; queue: string }>(
          "SELECT id::text AS id, queue FROM soniq_jobs WHERE flow_id = $1",
          [flowId],
        )
      ).rows[0];
      if (row === undefined) throw new Error("the flow's root job is missing");
      expect(await jobVersion(row.id)).toBe(3);
      const job = (await claimAll(row.queue)).get(row.id) as Job;
      expect(job).toMatchObject({ flowId, stepRef: "a", argsVersion: 3 });
      expect(
        await backend.runs.settle([{ ...deadLetter(job), flow: { flowId, stepRef: "a", add: [] } }]),
      ).toEqual([true]);
      expect(await deadVersion(row.id)).toBe(3);
      const request = replayRequest({ step: true });
      expect(await backend.deadLetters.replay(row.id, request)).toBe(request.newId);
      expect(await jobVersion(request.newId)).toBe(3);
    } finally {
      await soniq.close();
    }
  });
});

describe("the task registry stores versions", () => {
  it("lists each (task, worker)'s version; re-registering replaces it; a name listed twice counts once", async () => {
    const [w1, w2] = [randomUUID(), randomUUID()];
    await registerWorker(backend, w1);
    await registerWorker(backend, w2);
    await backend.workers.registerTaskNames(w1, [
      { name: "v.b", version: null },
      { name: "v.a", version: 3 },
    ]);
    await backend.workers.registerTaskNames(w2, [{ name: "v.a", version: 2 }]);
    const rows = async () =>
      (await backend.workers.listTaskNames()).map((t) => [t.taskName, t.workerId, t.version]);
    expect(await rows()).toEqual(
      [
        ["v.a", w1, 3],
        ["v.a", w2, 2],
        ["v.b", w1, null],
      ].sort((x, y) => `${x[0]}${x[1]}`.localeCompare(`${y[0]}${y[1]}`)),
    );

    // A deploy: w2 comes back with v.a at version 3 and v.b unversioned.
    await backend.workers.registerTaskNames(w2, [
      { name: "v.a", version: 3 },
      { name: "v.b", version: 1 },
      { name: "v.b", version: null },
    ]);
    // And w1 drops v.a's version.
    await backend.workers.registerTaskNames(w1, [{ name: "v.a", version: null }]);
    const now = await backend.workers.listTaskNames();
    const byKey = new Map(now.map((t) => [`${t.taskName} ${t.workerId}`, t.version]));
    expect(byKey).toEqual(
      new Map([
        [`v.a ${w1}`, null],
        [`v.a ${w2}`, 3],
        [`v.b ${w1}`, null],
        [`v.b ${w2}`, null],
      ]),
    );
    for (const t of now) expect(Date.now() - t.lastSeenAt.getTime()).toBeLessThan(60_000);
  });
});
