/**
 * `soniq jobs upgrade <name>` (DESIGN.md section 20): the app's module (fixtures/versioned.ts: `emails.welcome` at
 * version 3, upcasters from 1 and 2) rewrites the queued jobs and dead letters of older versions through core's
 * `soniq.jobs.upgrade`; without a module the command refuses. Rows are seeded by name with `{ version }` from the
 * test process, a dead letter by a worker of the test process that still runs version 1.
 */
import { hostname, userInfo } from "node:os";
import { fileURLToPath } from "node:url";
import { PermanentError, type Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  expectNoRunningChildren,
  json,
  openApp,
  type Result,
  soniqCli,
  type TestDb,
} from "./cli.js";
import { BACKENDS } from "./seed.js";

const VERSIONED_APP = fileURLToPath(new URL("./fixtures/versioned.ts", import.meta.url));
/** The audit actor the CLI writes: cli:<os user>@<hostname>. */
const ACTOR = `cli:${userInfo().username}@${hostname()}`;
const NAME = "emails.welcome";

interface Seeded {
  /** Queued at version 1 and 2: the upgrade rewrites them. */
  ann: string;
  bob: string;
  /** Version 1 with an address the upcaster refuses: left as it was. */
  nobody: string;
  /** Current (version 3) and unversioned (taken as current): never touched. */
  current: string;
  unversioned: string;
  /** A dead letter at version 1. */
  dead: string;
}

/** The rows above: enqueued by name from the test process, as producers on older code would. */
async function seed(app: Soniq, db: TestDb): Promise<Seeded> {
  const enqueue = async (args: object, version?: number) =>
    (await app.jobs.enqueue(NAME, args, { queue: "welcome", ...(version ? { version } : {}) })).id;
  const seeded = {
    ann: await enqueue({ email: "ann@example.com" }, 1),
    bob: await enqueue({ to: "bob@example.com" }, 2),
    nobody: await enqueue({ email: "nobody" }, 1),
    current: await enqueue({ to: "cy@example.com", locale: "fr" }, 3),
    unversioned: await enqueue({ to: "dee@example.com", locale: "de" }),
  };
  // A worker on the old code (version 1) dead-letters its job: the dead letter keeps version 1.
  const old = await openApp(db, false);
  old.job(
    NAME,
    async () => {
      throw new PermanentError("the mail provider refused");
    },
    { queue: "welcome_old" },
  );
  const { id: dead } = await old.jobs.enqueue(NAME, { email: "eve@example.com" });
  await old.worker({ queues: ["welcome_old"] }).runOnce();
  await old.close();
  expect(await app.deadLetters.get(dead)).toMatchObject({ argsVersion: 1 });
  return { ...seeded, dead };
}

describe.each(BACKENDS)("soniq jobs upgrade on %s", (_kind, makeDb) => {
  let db: TestDb;
  let app: Soniq;
  let rows: Seeded;
  /** The binary on this database; the module reads SONIQ_DATABASE_URL for its own backend. */
  const cli = (args: string[], env: Record<string, string> = {}): Promise<Result> =>
    soniqCli([...args, "--database-url", db.url], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url, ...env },
    });
  const upgrade = (...args: string[]) => cli(["jobs", "upgrade", NAME, ...args, "--module", VERSIONED_APP]);
  /** Every seeded row's args and version, jobs and the dead letter. */
  const snapshot = async () =>
    Promise.all([
      ...[rows.ann, rows.bob, rows.nobody, rows.current, rows.unversioned].map(async (id) => {
        const job = await app.jobs.get(id);
        return { id, args: job?.args, argsVersion: job?.argsVersion };
      }),
      app.deadLetters
        .get(rows.dead)
        .then((d) => ({ id: rows.dead, args: d?.args, argsVersion: d?.argsVersion })),
    ]);

  beforeAll(async () => {
    assertBuilt();
    db = makeDb();
    await db.create();
    const setup = await soniqCli(["setup", "--database-url", db.url], { cwd: db.dir });
    expect(setup.code, setup.stderr).toBe(0);
    app = await openApp(db);
    rows = await seed(app, db);
  });

  afterAll(async () => {
    expectNoRunningChildren();
    await app?.close();
    await db?.drop();
  });

  it("upgrade/needs-module: without --module or SONIQ_MODULE it exits 2, says how, and changes nothing", async () => {
    const before = await snapshot();
    const r = await cli(["jobs", "upgrade", NAME]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /^error \[SONIQ_CLI_USAGE\] soniq jobs upgrade needs your app's module: the definition of emails\.welcome .* Pass --module .* or set SONIQ_MODULE\.\n$/,
    );
    expect(await snapshot()).toEqual(before);
  });

  it("upgrade/unknown-name: a name the module does not define exits 1 naming the module; nothing changed", async () => {
    const before = await snapshot();
    const r = await cli(["jobs", "upgrade", "emails.nope", "--module", VERSIONED_APP]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `error [SONIQ_UNKNOWN_TASK_NAME] ${VERSIONED_APP} defines no job named emails.nope;`,
    );
    expect(await snapshot()).toEqual(before);
  });

  it("upgrade/dry-run: what would be rewritten and what would fail, nothing written", async () => {
    const before = await snapshot();
    const r = await upgrade("--dry-run");
    expect(r.code, r.stderr).toBe(1); // a row would fail
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`Would upgrade 2 queued jobs and 1 dead letter of "emails.welcome" to version 3`);
    expect(lines[1]).toMatch(/^1 row would fail the upcast or the schema and would be left unchanged/);
    expect(lines[2]).toMatch(new RegExp(`^  job ${rows.nobody} \\(version 1\\): .*not an address: nobody`));
    expect(lines).toHaveLength(3);

    const asJson = await cli(["jobs", "upgrade", NAME, "--dry-run", "--json"], {
      SONIQ_MODULE: VERSIONED_APP,
    });
    expect(asJson.code).toBe(1);
    expect(json(asJson)).toEqual({
      name: NAME,
      version: 3,
      jobs: 2,
      deadLetters: 1,
      failed: 1,
      failures: [
        {
          id: rows.nobody,
          kind: "job",
          version: 1,
          error: expect.stringContaining("not an address: nobody"),
        },
      ],
      dryRun: true,
    });
    expect(await snapshot()).toEqual(before);
  });

  it("upgrade/rewrites: older rows through the upcasters to version 3, a failing row left, audited job.upgrade", async () => {
    const r = await upgrade();
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout.split("\n")[0]).toBe(
      `Upgraded 2 queued jobs and 1 dead letter of "emails.welcome" to version 3`,
    );
    expect(r.stdout).toContain("1 row failed the upcast or the schema and was left unchanged");
    expect(r.stdout).toContain(`job ${rows.nobody} (version 1)`);
    const v3 = (to: string, locale = "en") => ({ args: { to, locale }, argsVersion: 3 });
    expect(await snapshot()).toEqual([
      { id: rows.ann, ...v3("ann@example.com") },
      { id: rows.bob, ...v3("bob@example.com") },
      { id: rows.nobody, args: { email: "nobody" }, argsVersion: 1 },
      { id: rows.current, ...v3("cy@example.com", "fr") },
      { id: rows.unversioned, args: { to: "dee@example.com", locale: "de" }, argsVersion: null },
      { id: rows.dead, ...v3("eve@example.com") },
    ]);
    const [audit] = await app.audit.list({ action: "job.upgrade", limit: 1 });
    expect(audit).toMatchObject({ actor: ACTOR, target: NAME, outcome: "ok" });

    // Once the failing row is gone, nothing is left to do: exit 0.
    expect(await app.jobs.cancel(rows.nobody)).toBe(true);
    const again = await upgrade("--json");
    expect(again.code, again.stderr).toBe(0);
    expect(json(again)).toEqual({
      name: NAME,
      version: 3,
      jobs: 0,
      deadLetters: 0,
      failed: 0,
      failures: [],
      dryRun: false,
    });
    expect((await upgrade()).stdout).toBe(
      `Upgraded 0 queued jobs and 0 dead letters of "emails.welcome" to version 3\n`,
    );
  });

  it("upgrade/help: a description, the module it needs, the JSON shape and examples", async () => {
    const help = await cli(["jobs", "upgrade", "--help"]);
    expect(help.code).toBe(0);
    for (const part of [
      "rewrite a job's queued jobs and dead letters to its current args version",
      "--dry-run",
      "Needs your app's module (--module <file> or SONIQ_MODULE)",
      "JSON (--json): { name, version, jobs, deadLetters, failed, failures: [{ id, kind, version, error }], dryRun }",
      "Examples:\n  soniq jobs upgrade emails.send_welcome --module ./src/soniq.ts --dry-run",
    ]) {
      expect(help.stdout).toContain(part);
    }
    expect((await cli(["jobs", "--help"])).stdout).toMatch(/upgrade \[options\] <name>/);
  });
});
