/**
 * Group B: the database itself enforces the job state machine (raw SQL, not the library), and the
 * columns carry the defaults DESIGN.md section 3 gives them.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  const backend = postgresBackend({ connectionString: db.url });
  try {
    await backend.migrations.apply();
  } finally {
    await backend.close();
  }
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function insertJob(status = "queued", extra: { dedupKey?: string } = {}): Promise<string> {
  const id = randomUUID();
  await client.query(
    "INSERT INTO soniq_jobs (id, job_name, args, status, dedup_key) VALUES ($1, 'schema.test', '{}', $2, $3)",
    [id, status, extra.dedupKey ?? null],
  );
  return id;
}

async function setStatus(id: string, status: string): Promise<void> {
  await client.query("UPDATE soniq_jobs SET status = $2 WHERE id = $1", [id, status]);
}

async function statusOf(id: string): Promise<string> {
  const res = await client.query<{ status: string }>("SELECT status FROM soniq_jobs WHERE id = $1", [id]);
  return res.rows[0]?.status ?? "<missing>";
}

/** The pg error a statement raised (fails the test when it did not raise). */
async function rejection(run: () => Promise<unknown>): Promise<{ code: string; constraint?: string }> {
  try {
    await run();
  } catch (err) {
    return err as { code: string; constraint?: string };
  }
  throw new Error("the statement succeeded but the database should have rejected it");
}

describe("schema/status-check", () => {
  it.each(["dead_letter", "failed", "", "QUEUED"])("rejects inserting status %j (23514)", async (status) => {
    const err = await rejection(() => insertJob(status));
    expect(err.code).toBe("23514");
    expect(err.constraint).toBe("soniq_jobs_status_check");
  });

  it("rejects updating a queued job to dead_letter and leaves it queued", async () => {
    const id = await insertJob();
    const err = await rejection(() => setStatus(id, "dead_letter"));
    expect(err).toMatchObject({ code: "23514", constraint: "soniq_jobs_status_check" });
    expect(await statusOf(id)).toBe("queued");
  });

  it("rejects updating a processing job to dead_letter", async () => {
    const id = await insertJob("processing");
    const err = await rejection(() => setStatus(id, "dead_letter"));
    expect(err).toMatchObject({ code: "23514", constraint: "soniq_jobs_status_check" });
    expect(await statusOf(id)).toBe("processing");
  });
});

describe("schema/terminal-states", () => {
  it.each([
    ["done", "queued"],
    ["done", "processing"],
    ["done", "cancelled"],
    ["cancelled", "queued"],
    ["cancelled", "processing"],
    ["cancelled", "done"],
  ])("rejects %s -> %s in the database itself", async (from, to) => {
    const id = await insertJob(from);
    const err = await rejection(() => setStatus(id, to));
    expect(err).toMatchObject({ code: "23514", constraint: "soniq_jobs_terminal_status" });
    expect(await statusOf(id)).toBe(from);
  });

  it.each([
    ["queued", "processing"],
    ["processing", "done"],
    ["processing", "queued"],
    ["queued", "cancelled"],
    ["processing", "cancelled"],
  ])("allows %s -> %s", async (from, to) => {
    const id = await insertJob(from);
    await setStatus(id, to);
    expect(await statusOf(id)).toBe(to);
  });

  it("schema/terminal-guard-whole-statement: a statement that moves a terminal row with others changes none of them", async () => {
    const [queued, done] = [await insertJob("queued"), await insertJob("done")];
    const err = await rejection(() =>
      client.query("UPDATE soniq_jobs SET status = 'processing' WHERE id = ANY($1::uuid[])", [
        [queued, done],
      ]),
    );
    expect(err).toMatchObject({ code: "23514", constraint: "soniq_jobs_terminal_status" });
    expect([await statusOf(queued), await statusOf(done)]).toEqual(["queued", "done"]);
  });

  it("schema/terminal-guard-after: the guard is an AFTER row trigger (a BEFORE one locks every updated row first, a WAL record per status change)", async () => {
    const res = await client.query<{ before: boolean; row: boolean }>(
      `SELECT (tgtype & 2) <> 0 AS before, (tgtype & 1) <> 0 AS row FROM pg_trigger
       WHERE tgrelid = 'soniq_jobs'::regclass AND tgname = 'soniq_jobs_terminal_status'`,
    );
    expect(res.rows).toEqual([{ before: false, row: true }]);
  });

  it("lets other columns of a terminal row change (result TTL cleanup, result writes)", async () => {
    const id = await insertJob("done");
    await client.query("UPDATE soniq_jobs SET expires_at = now(), result = '1' WHERE id = $1", [id]);
    expect(await statusOf(id)).toBe("done");
  });
});

describe("schema/defaults", () => {
  it("fills soniq_jobs defaults as DESIGN.md says", async () => {
    const id = await insertJob();
    const res = await client.query(
      `SELECT status, attempts, max_attempts, queue, priority, unique_job, dedup_key, expires_at, last_error,
              result, worker_id, scheduled_at <= now() AS due, created_at IS NOT NULL AS created,
              updated_at IS NOT NULL AS updated
       FROM soniq_jobs WHERE id = $1`,
      [id],
    );
    expect(res.rows[0]).toEqual({
      status: "queued",
      attempts: 0,
      max_attempts: 3,
      queue: "default",
      priority: 100,
      unique_job: false,
      dedup_key: null,
      expires_at: null,
      last_error: null,
      result: null,
      worker_id: null,
      due: true,
      created: true,
      updated: true,
    });
  });

  it("gives a job an id when none is passed", async () => {
    const res = await client.query<{ id: string }>(
      "INSERT INTO soniq_jobs (job_name, args) VALUES ('schema.test', '{}') RETURNING id",
    );
    expect(res.rows[0]?.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("fills soniq_dead_letter_jobs defaults: resurrection_count 0, moved_to_dead_letter_at now", async () => {
    const id = randomUUID();
    await client.query(
      `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
         dead_letter_reason, original_created_at)
       VALUES ($1, 'schema.test', '{}', 'default', 100, 3, 3, 'max_retries_exceeded', now())`,
      [id],
    );
    const res = await client.query(
      `SELECT resurrection_count, last_resurrection_at, tags, moved_to_dead_letter_at IS NOT NULL AS moved
       FROM soniq_dead_letter_jobs WHERE id = $1`,
      [id],
    );
    expect(res.rows[0]).toEqual({
      resurrection_count: 0,
      last_resurrection_at: null,
      tags: null,
      moved: true,
    });
  });

  it("requires a dead_letter_reason", async () => {
    const err = await rejection(() =>
      client.query(
        `INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts,
           original_created_at) VALUES ($1, 'x', '{}', 'default', 100, 3, 3, now())`,
        [randomUUID()],
      ),
    );
    expect(err.code).toBe("23502");
  });

  it("fills soniq_workers defaults: active, concurrency 1, no queues", async () => {
    const id = randomUUID();
    await client.query("INSERT INTO soniq_workers (id, hostname, pid) VALUES ($1, 'h', 1)", [id]);
    const res = await client.query(
      "SELECT status, concurrency, queues, last_heartbeat IS NOT NULL AS beat FROM soniq_workers WHERE id = $1",
      [id],
    );
    expect(res.rows[0]).toEqual({ status: "active", concurrency: 1, queues: [], beat: true });
  });
});

describe("schema/dedup-index", () => {
  it("rejects a second queued row with the same dedup_key (23505)", async () => {
    const key = `k-${randomUUID()}`;
    await insertJob("queued", { dedupKey: key });
    const err = await rejection(() => insertJob("queued", { dedupKey: key }));
    expect(err).toMatchObject({ code: "23505", constraint: "idx_soniq_jobs_dedup_key" });
  });

  it.each(["processing", "done", "cancelled"])(
    "allows a new queued row once the first is %s",
    async (status) => {
      const key = `k-${randomUUID()}`;
      const first = await insertJob("queued", { dedupKey: key });
      await setStatus(first, status);
      const second = await insertJob("queued", { dedupKey: key });
      expect(await statusOf(second)).toBe("queued");
    },
  );

  it("rejects requeueing a processing row while another queued row holds its dedup_key", async () => {
    const key = `k-${randomUUID()}`;
    const first = await insertJob("processing", { dedupKey: key });
    await insertJob("queued", { dedupKey: key });
    const err = await rejection(() => setStatus(first, "queued"));
    expect(err.code).toBe("23505");
  });
});
