/**
 * `soniq workers` and `soniq status` show each worker's derived state (core's `soniq.workers.list()`):
 * a worker whose heartbeat is older than the stale threshold reads `stale`, not its stored `active`.
 * Postgres only: the heartbeat is aged with one UPDATE (the rule itself is core's and tested there).
 */
import { randomUUID } from "node:crypto";
import type { Soniq } from "@soniq/core";
import { shortId } from "@soniq/core/ops";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, json, openApp, postgresDb, soniqCli } from "./cli.js";

const db = postgresDb();
let app: Soniq;
const cli = (...args: string[]) => soniqCli([...args, "--database-url", db.url], { cwd: db.dir });
const live = randomUUID();
const silent = randomUUID();

beforeAll(async () => {
  assertBuilt();
  await db.create();
  expect((await cli("setup")).code).toBe(0);
  app = await openApp(db);
  for (const [id, queues] of [
    [live, ["emails"]],
    [silent, []],
  ] as const) {
    await app.backend.workers.register({
      id,
      hostname: "host-1",
      pid: 7,
      queues,
      concurrency: 2,
      version: null,
      metadata: null,
    });
  }
  await app.backend.workers.registerTaskNames(live, [{ name: "emails.send", version: null }]);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("UPDATE soniq_workers SET last_heartbeat = now() - interval '1 hour' WHERE id = $1", [
      silent,
    ]);
  } finally {
    await client.end();
  }
});

afterAll(async () => {
  await app?.close();
  await db.drop();
});

describe("worker state in the CLI", () => {
  it("workers/state: a silent active worker is stale in `workers` (table and JSON) and in `status`", async () => {
    const r = await cli("workers", "--json");
    expect(r.code, r.stderr).toBe(0);
    const rows = json<{ id: string; state: string; status: string; jobNames: string[] }[]>(r);
    expect(rows.map((w) => [w.id, w.state, w.status])).toEqual([
      [live, "live", "active"],
      [silent, "stale", "active"],
    ]);
    expect(rows[0]?.jobNames).toEqual(["emails.send"]);
    const table = (await cli("workers")).stdout;
    expect(table).toMatch(new RegExp(`${shortId(silent)}\\S*\\s+stale\\s+host-1`));
    expect(table).toMatch(new RegExp(`${shortId(live)}\\S*\\s+live\\s+host-1`));
    const status = await cli("status");
    expect(status.stdout).toContain("Workers (1 live, 1 stale)");
    expect(status.stdout).toMatch(/\bstale\b/);
    const doc = json<{ workers: { state: string }[] }>(await cli("status", "--json"));
    expect(doc.workers.map((w) => w.state)).toEqual(["live", "stale"]);
  });
});
