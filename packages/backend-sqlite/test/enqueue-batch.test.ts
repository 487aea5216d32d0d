/**
 * A plain batch (no dedup key, no `unique`) is inserted `ROWS_PER_INSERT` rows per statement
 * (internal/enqueue.ts). Each row must land as a single enqueue of the same job would, in every chunk and in
 * the rows short of one; a repeated id anywhere must still reject the whole call, naming the id; and a batch
 * inside the caller's transaction must go with its rollback.
 */
import type { NewJob } from "@soniq/core/backend";
import { newJob, uniqueQueue } from "@soniq/testkit";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SqliteBackend, sqliteBackend } from "../src/index.js";
import { ROWS_PER_INSERT } from "../src/internal/enqueue.js";
import { tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

let db: Database.Database;
let backend: SqliteBackend;
beforeEach(async () => {
  db = new Database(tmp.file());
  backend = sqliteBackend({ database: db });
  await backend.migrations.apply();
});
afterEach(async () => {
  await backend.close();
  db.close();
});

/** Two full chunks and seven rows more, of varied shapes (text a statement could misread included). */
const SIZE = 2 * ROWS_PER_INSERT + 7;
function shape(queue: string, i: number): NewJob {
  const variants: Partial<NewJob>[] = [
    { args: { i, text: "quotes \" and ' and \\ and ünïcödé" } },
    { args: i, priority: i % 200, maxAttempts: 1 + (i % 9), group: `g-${i % 3}`, argsVersion: 1 + (i % 5) },
    { args: [i, null, { deep: [true] }], producerId: `p-${i}`, traceId: `${i}`.padStart(32, "0") },
    { args: null, scheduledAt: new Date(Date.now() + 3_600_000), traceContext: { traceparent: `00-${i}` } },
  ];
  return newJob({ queue, jobName: `batch.shape-${i % 4}`, ...variants[i % variants.length] });
}

const COLUMNS = `job_name, args, args_hash, status, attempts, max_attempts, priority, unique_job, dedup_key,
  scheduled_at > created_at + 60000 AS later, producer_id, "group", trace_id, trace_context, args_version`;
const rows = (queue: string) =>
  db.prepare(`SELECT ${COLUMNS} FROM soniq_jobs WHERE queue = ? ORDER BY id`).all(queue);
const count = (queue: string) =>
  (db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs WHERE queue = ?").get(queue) as { n: number }).n;

describe("a plain batch", () => {
  it("stores every row as a single enqueue of the same job would, in full chunks and in the rest", async () => {
    const [single, batched] = [uniqueQueue(), uniqueQueue()];
    for (let i = 0; i < SIZE; i++) await backend.jobs.enqueue(shape(single, i), {});
    const batch = Array.from({ length: SIZE }, (_, i) => shape(batched, i));
    const results = await backend.jobs.enqueueMany(batch, {});
    expect(results).toEqual(batch.map((job) => ({ id: job.id, deduplicated: false })));
    const expected = rows(single);
    expect(expected).toHaveLength(SIZE);
    expect(rows(batched)).toEqual(expected);
  });

  it.each([
    ["inside the first chunk", 3, 10],
    ["in a later chunk, against an earlier one", 5, ROWS_PER_INSERT + 1],
    ["in the rows after the last chunk", 0, 2 * ROWS_PER_INSERT + 4],
  ])(
    "a repeated id %s rejects the whole call, naming the id, and writes nothing",
    async (_, first, again) => {
      const queue = uniqueQueue();
      const batch = Array.from({ length: SIZE }, (_, i) => shape(queue, i));
      const repeated = (batch[first] as NewJob).id;
      batch[again] = { ...(batch[again] as NewJob), id: repeated };
      const error = await backend.jobs.enqueueMany(batch, {}).then(
        () => null,
        (err: unknown) => err,
      );
      expect(error).toMatchObject({ code: "SONIQ_INVALID_ARGUMENT", context: { id: repeated } });
      expect(count(queue)).toBe(0);
    },
  );

  it("an id already stored rejects the whole call and leaves the stored row as it was", async () => {
    const queue = uniqueQueue();
    const stored = newJob({ queue, args: { stored: true } });
    await backend.jobs.enqueue(stored, {});
    const batch = Array.from({ length: SIZE }, (_, i) => shape(queue, i));
    batch[ROWS_PER_INSERT + 2] = { ...(batch[ROWS_PER_INSERT + 2] as NewJob), id: stored.id };
    await expect(backend.jobs.enqueueMany(batch, {})).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
    expect(count(queue)).toBe(1);
    expect((await backend.jobs.get(stored.id))?.args).toEqual({ stored: true });
  });

  it("inside the caller's transaction, goes with its rollback", async () => {
    const queue = uniqueQueue();
    const batch = Array.from({ length: SIZE }, (_, i) => shape(queue, i));
    let pending: Promise<unknown> | undefined;
    expect(() =>
      db.transaction(() => {
        pending = backend.jobs.enqueueMany(batch, { tx: db });
        throw new Error("the caller rolls back");
      })(),
    ).toThrow("the caller rolls back");
    await pending;
    expect(count(queue)).toBe(0);
    await backend.jobs.enqueueMany(batch, {});
    expect(count(queue)).toBe(SIZE);
  });
});
