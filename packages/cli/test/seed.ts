/**
 * One seeded database per test file and backend: set up through the CLI, three test.fail jobs and one
 * test.orphan (no handler anywhere) dead-lettered by a real `soniq worker` run on the fixture (which also
 * registers its job names), then three queued test.ok jobs (two on default, one on emails).
 */
import type { Soniq } from "@soniq/core";
import { eventually } from "@soniq/testkit";
import { afterAll, beforeAll, expect } from "vitest";
import {
  assertBuilt,
  expectNoRunningChildren,
  FIXTURE,
  openApp,
  postgresDb,
  type Result,
  soniqCli,
  sqliteDb,
  start,
  type TestDb,
} from "./cli.js";

/**
 * The backends the CLI's command tests run on: `pnpm test` (the `cli` project) runs them on SQLite, the
 * embedded default; `pnpm test:e2e` runs the same files again on PostgreSQL (the `cli-postgres` project,
 * vitest.postgres.config.ts). Each project sets SONIQ_CLI_TEST_BACKENDS; unset (a file run on its own), both.
 */
export const BACKENDS = (
  [
    ["sqlite", sqliteDb],
    ["postgres", postgresDb],
  ] as const
).filter(([kind]) => {
  const chosen = process.env.SONIQ_CLI_TEST_BACKENDS;
  return chosen === undefined || chosen.split(",").includes(kind);
});

export const STAT_KEYS = ["cancelled", "dead_letter", "done", "processing", "queued", "total"];

export interface Seeded {
  db: TestDb;
  /** A Soniq instance in the test process on the same database, to seed rows and check results. */
  app: Soniq;
  /** The seeding worker's run: output and exit code. */
  firstWorker: Result;
  /** Runs the binary with `--database-url` of this database appended. */
  cli(...args: string[]): Promise<Result>;
}

/** Registers beforeAll/afterAll for a seeded database; the fields are filled once beforeAll ran. */
export function useSeededDatabase(makeDb: () => TestDb): Seeded {
  const s = {
    cli: (...args: string[]) => soniqCli([...args, "--database-url", s.db.url], { cwd: s.db.dir }),
  } as Seeded;

  beforeAll(async () => {
    assertBuilt();
    s.db = makeDb();
    await s.db.create();
    const setup = await s.cli("setup");
    expect(setup.code, setup.stderr).toBe(0);
    s.app = await openApp(s.db);
    for (let i = 0; i < 3; i++) await s.app.jobs.enqueue("test.fail", { i }, { queue: "failing" });
    await s.app.jobs.enqueue("test.orphan", {}, { queue: "orphans" });
    const worker = start(["worker", FIXTURE], { cwd: s.db.dir, env: { SONIQ_DATABASE_URL: s.db.url } });
    await eventually(async () => expect(await s.app.deadLetters.list()).toHaveLength(4), {
      timeoutMs: 20_000,
    });
    worker.child.kill("SIGTERM");
    s.firstWorker = await worker.exited;
    await s.app.jobs.enqueue("test.ok", { n: 1 });
    await s.app.jobs.enqueue("test.ok", { n: 2 });
    await s.app.jobs.enqueue("test.ok", { n: 3 }, { queue: "emails" });
  });

  afterAll(async () => {
    expectNoRunningChildren();
    await s.app?.close();
    await s.db?.drop();
  });

  return s;
}
