/**
 * `jobs.list` has no index of its own: jobs list by id (UUIDv7, time-ordered), so every page must read the
 * primary key in order (backwards for newest first, forwards for a `before` page) and stop after `limit`
 * entries, from the top and from a deep position, on a table with statistics. EXPLAIN runs the SQL text the
 * backend sent, captured from the pool, with the values it sent.
 */
import { type Job, jobListQuery } from "@soniq/core/backend";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";

interface Sent {
  text: string;
  values: unknown[];
}

let db: TestDatabase;
let client: pg.Client;
/** The jobs.list statements the backend sent, by label. */
const sent = new Map<string, Sent>();
let deep: Job;

beforeAll(async () => {
  db = await createMigratedDatabase();
  const pool = new pg.Pool({ connectionString: db.url });
  const query = pool.query.bind(pool);
  let label: string | null = null;
  pool.query = ((config: unknown, values?: unknown) => {
    const c = config as { text?: string; values?: unknown[] };
    if (label !== null && typeof c === "object" && c?.text?.includes("FROM soniq_jobs")) {
      sent.set(label, { text: c.text, values: c.values ?? [] });
    }
    return (query as (a: unknown, b?: unknown) => unknown)(config, values);
  }) as typeof pool.query;
  const backend = postgresBackend({ pool });
  for (let i = 0; i < 20; i++) {
    await backend.jobs.enqueueMany(
      Array.from({ length: 1000 }, (_, j) => newJob({ queue: ["a", "b", "c", "d"][j % 4] as string })),
      {},
    );
  }
  const list = async (name: string, filter: Parameters<typeof jobListQuery>[0]) => {
    label = name;
    try {
      return await backend.jobs.list(jobListQuery(filter));
    } finally {
      label = null;
    }
  };
  const first = await list("first page", { limit: 51 });
  expect(first).toHaveLength(51);
  // A position 15,000 jobs down the list (offset only to find it; the pages below use the position).
  deep = (await backend.jobs.list(jobListQuery({ limit: 1, offset: 15_000 })))[0] as Job;
  await list("after a deep position", { limit: 51, after: deep });
  await list("before a deep position", { limit: 51, before: deep });
  await backend.close();
  await pool.end();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query("VACUUM ANALYZE soniq_jobs");
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function plan(label: string): Promise<string> {
  const s = sent.get(label);
  if (!s) throw new Error(`the backend never ran jobs.list for ${label}`);
  const res = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${s.text}`, s.values);
  return res.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
}

describe("jobs.list/plan on 20,000 analyzed rows", () => {
  it.each([
    ["first page", "Index Scan Backward using soniq_jobs_pkey"],
    ["after a deep position", "Index Scan Backward using soniq_jobs_pkey"],
    ["before a deep position", "Index Scan using soniq_jobs_pkey"],
  ])("%s reads the primary key in order: no seq scan, no sort", async (label, scan) => {
    const text = await plan(label);
    expect(text, text).toContain(`${scan} on soniq_jobs`);
    expect(text, text).not.toMatch(/Seq Scan|Sort|Bitmap/);
    // The position is an index condition: the scan starts there and reads one page of entries.
    if (label !== "first page") expect(text, text).toMatch(/Index Cond: \(id [<>] /);
    expect(text, text).toMatch(/Index Scan.*\(actual time=[\d.]+\.\.[\d.]+ rows=51 loops=1\)/);
  });

  it("pages by id only: the statement names neither created_at in its order nor the dropped list index", async () => {
    const s = sent.get("after a deep position") as Sent;
    expect(s.text).toMatch(/ORDER BY id DESC/);
    expect(s.values).toContain(deep.id);
    const { rows } = await client.query(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'soniq_jobs' AND indexname = 'idx_soniq_jobs_list'",
    );
    expect(rows).toEqual([]);
  });
});
