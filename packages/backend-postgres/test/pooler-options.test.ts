/**
 * The options that make the backend pooler-safe (docs/reference/backend-postgres.md, "Through a pooler"): named statements as set
 * ("auto" falls back to unnamed when the server loses one), listen "poll" opening no LISTEN connection,
 * and their validation. What they do through a real
 * PgBouncer is tested by the scale suite (packages/e2e/scale).
 */
import { isSoniqError } from "@soniq/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresBackendOptions, postgresBackend } from "../src/index.js";
import { createMigratedDatabase, newJob, type TestDatabase } from "./pgdb.js";

let db: TestDatabase;

beforeAll(async () => {
  db = await createMigratedDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The named statements prepared on the one session of a pool of size 1, after a get and an enqueue. */
async function preparedAfterUse(options: PostgresBackendOptions): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  const backend = postgresBackend({ pool }, options);
  try {
    const { id } = await backend.jobs.enqueue(newJob(), {});
    await backend.jobs.get(id);
    const res = await pool.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name");
    return res.rows.map((r) => r.name);
  } finally {
    await backend.close();
    await pool.end();
  }
}

describe("preparedStatements", () => {
  it('"auto" (default) and true name the hot-path statements, prepared once per session', async () => {
    for (const options of [{}, { preparedStatements: true }]) {
      const names = await preparedAfterUse(options);
      expect(names).toContain("soniq_get_job");
      expect(names.some((n) => n.startsWith("soniq_enqueue_one_"))).toBe(true);
    }
  });

  it("false prepares nothing on the session", async () => {
    expect(await preparedAfterUse({ preparedStatements: false })).toEqual([]);
  });

  it('"auto" retries a statement the server lost (26000) unnamed and names nothing after; true fails', async () => {
    // What a transaction-mode pooler does: the next statement lands on a server session without it.
    const run = async (preparedStatements: true | "auto") => {
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      const backend = postgresBackend({ pool }, { preparedStatements });
      try {
        const { id } = await backend.jobs.enqueue(newJob(), {});
        await backend.jobs.get(id);
        await pool.query("DEALLOCATE ALL");
        const again = await backend.jobs.get(id).then(
          (job) => job?.id,
          (err: unknown) => err,
        );
        await backend.jobs.enqueue(newJob(), {});
        const left = await pool.query("SELECT name FROM pg_prepared_statements");
        return { again, left: left.rows.length };
      } finally {
        await backend.close();
        await pool.end();
      }
    };
    const auto = await run("auto");
    expect(typeof auto.again).toBe("string");
    expect(auto.left).toBe(0);
    const strict = await run(true);
    expect(isSoniqError(strict.again, "SONIQ_BACKEND_ERROR")).toBe(true);
  });
});

describe("listen", () => {
  it('"poll" declares no notify capability and subscribing opens no LISTEN connection', async () => {
    const backend = postgresBackend({ connectionString: db.url }, { listen: "poll" });
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      expect(backend.capabilities.notify).toBe(false);
      const unsubscribe = await backend.wakeUps.subscribe(() => {});
      const res = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
      );
      expect(res.rows[0]?.n).toBe(0);
      await unsubscribe();
    } finally {
      await admin.end();
      await backend.close();
    }
  });

  it('"auto" on a direct connection passes its NOTIFY probe and delivers wake-ups', async () => {
    const backend = postgresBackend({ connectionString: db.url });
    const heard: string[] = [];
    try {
      expect(backend.capabilities.notify).toBe(true);
      const unsubscribe = await backend.wakeUps.subscribe((queue) => heard.push(queue));
      await backend.jobs.enqueue(newJob({ queue: "probe_passed" }), {});
      const deadline = Date.now() + 5000;
      while (!heard.includes("probe_passed") && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      expect(heard).toContain("probe_passed");
      await unsubscribe();
    } finally {
      await backend.close();
    }
  });
});

describe("validation", () => {
  it("reports every bad pooler option in one SONIQ_INVALID_OPTIONS error and opens nothing", () => {
    const bad = {
      preparedStatements: "yes",
      listen: "sometimes",
      listenConnectionString: "",
      readConnectionString: 5,
    } as unknown as PostgresBackendOptions;
    let err: unknown;
    try {
      postgresBackend({ connectionString: db.url }, bad);
    } catch (e) {
      err = e;
    }
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
    const message = (err as Error).message;
    for (const word of [
      "preparedStatements",
      "listen must be",
      "listenConnectionString",
      "readConnectionString",
    ]) {
      expect(message).toContain(word);
    }
  });

  it('rejects listenConnectionString with listen: "poll"', () => {
    expect(() =>
      postgresBackend({ connectionString: db.url }, { listen: "poll", listenConnectionString: db.url }),
    ).toThrow(/listenConnectionString has no use/);
  });
});
