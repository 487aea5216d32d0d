/**
 * The bench survives PostgreSQL killing its connections (issue 17: one full run once died with exit 2 on
 * "terminating connection due to administrator command"). A small run of four Postgres rows is started,
 * and once a measurement's worker is running, every backend of that measurement's database is terminated
 * with pg_terminate_backend. Each row must come out INVALID, the run must finish and exit 1.
 *
 * Only this run's databases are touched: the child runs with a unique PGAPPNAME (node-postgres's default
 * application_name), and a database is terminated only when one of its sessions carries it.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { expect, test } from "vitest";
import { DEFAULT_DATABASE_URL } from "../src/pg-admin.js";

const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SYSTEMS = [
  // One row of each kind the harness runs differently: Soniq and a peer in the harness's own process tree on
  // Node 20, and Soniq and a peer whose setup, producer and worker are Node 24 children. (Every Postgres row
  // once made the test the slowest of CI's; the other peers' rows drive the same harness paths.)
  "soniq-postgres",
  "graphile-fast",
  "soniq-postgres-node24",
  "pg-boss-12",
  // Not sidequest-postgres: the poll below recognises a worker by a LISTEN or a SKIP LOCKED claim in
  // pg_stat_activity, and Sidequest's quick w3 can finish between two polls without showing either (CI saw its
  // row end valid, never terminated). The harness paths it uses (a Node 24 child host) are covered by the rows above.
];

/**
 * Databases of this run whose worker is up (a session listening or claiming), not yet terminated. A listening
 * session's last statement may be an UNLISTEN (Soniq's wake-up connection drops its probe channel after the
 * LISTENs it keeps), and a claim shows only until its connection's next statement: CI once saw Soniq's Node 24
 * row end valid, never terminated, when the detector knew only LISTEN.
 */
const WORKING = `SELECT datname FROM pg_stat_activity
WHERE datname LIKE 'bench\\_%' AND pid <> pg_backend_pid()
GROUP BY datname
HAVING bool_or(application_name = $1) AND bool_or(query ~* '^\\s*(UN)?LISTEN|SKIP LOCKED')`;

test("bench/survives-terminated-connections", async () => {
  const appName = `bench-termination-${randomBytes(4).toString("hex")}`;
  const json = "results/test-termination.json";
  rmSync(resolve(BENCH, json), { force: true });
  const args = ["--conditions=source", "--import", "tsx", "src/main.ts", "--quick", "--workloads", "w3"];
  const child = spawn(process.execPath, [...args, "--systems", SYSTEMS.join(","), "--json", json], {
    cwd: BENCH,
    env: { ...process.env, PGAPPNAME: appName },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout.resume();
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));

  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL });
  admin.on("error", () => {});
  await admin.connect();
  const terminated = new Set<string>();
  let running = true;
  void exited.then(() => {
    running = false;
  });
  try {
    while (running) {
      const found = await admin.query<{ datname: string }>(WORKING, [appName]);
      for (const { datname } of found.rows) {
        if (terminated.has(datname)) continue;
        terminated.add(datname);
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [
          datname,
        ]);
      }
      await new Promise((r) => setTimeout(r, 15));
    }
  } finally {
    await admin.end();
  }

  const code = await exited;
  expect(stderr).not.toContain("Unhandled 'error' event");
  expect(terminated.size).toBe(SYSTEMS.length);
  expect(code).toBe(1);
  const doc = JSON.parse(readFileSync(resolve(BENCH, json), "utf8")) as {
    samples: { system: string; valid: boolean; reason: string | null }[];
  };
  expect(doc.samples.map((s) => s.system).sort()).toEqual([...SYSTEMS].sort());
  for (const s of doc.samples) {
    expect(s.valid, `${s.system} should be INVALID`).toBe(false);
    expect(s.reason).toBeTruthy();
  }
}, 300_000);
