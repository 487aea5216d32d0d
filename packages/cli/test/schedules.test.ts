/**
 * Recurring jobs through the binary, on SQLite and PostgreSQL: `soniq scheduler` on a module declaring
 * `test.tick` every second, then `soniq schedules list|show|upcoming|history|pause|resume|trigger|remove`
 * and `status` on what it stored, the scheduler's graceful SIGTERM, and `worker --schedules`.
 */
import { fileURLToPath } from "node:url";
import type { Soniq } from "@soniq/core";
import { eventually } from "@soniq/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  expectNoRunningChildren,
  json,
  openApp,
  type Result,
  type Running,
  soniqCli,
  start,
  type TestDb,
} from "./cli.js";
import { BACKENDS } from "./seed.js";

const MODULE = fileURLToPath(new URL("./fixtures/schedules.ts", import.meta.url));
const NAME = "test.tick";
const UNKNOWN = "no.such.schedule";
const KEYS = [
  "name",
  "jobName",
  "cron",
  "every",
  "timezone",
  "args",
  "queue",
  "priority",
  "maxAttempts",
  "catchUp",
  "paused",
  "nextRunAt",
  "lastRunAt",
  "lastJobId",
  "createdAt",
];

interface Row {
  name: string;
  jobName: string;
  every: number | null;
  cron: string | null;
  paused: boolean;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastJobId: string | null;
}
interface Tick {
  tickAt: string;
  outcome: string;
  jobId: string | null;
  reason: string | null;
  recordedAt: string;
}

describe.each(BACKENDS)("soniq schedules on %s", (_kind, makeDb) => {
  let db: TestDb;
  let app: Soniq;
  let scheduler: Running;
  const cli = (...args: string[]): Promise<Result> =>
    soniqCli([...args, "--database-url", db.url], { cwd: db.dir });
  const history = async (): Promise<Tick[]> => {
    const r = await cli("schedules", "history", NAME, "--json");
    expect(r.code, r.stderr).toBe(0);
    return json<Tick[]>(r);
  };

  beforeAll(async () => {
    assertBuilt();
    db = makeDb();
    await db.create();
    const setup = await cli("setup");
    expect(setup.code, setup.stderr).toBe(0);
    app = await openApp(db);
  });

  afterAll(async () => {
    expectNoRunningChildren();
    await app?.close();
    await db?.drop();
  });

  it("scheduler/startup: stores the declaration and prints the schedules it serves", async () => {
    scheduler = start(["scheduler", MODULE, "--check-interval", "200"], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url },
    });
    await eventually(() => expect(scheduler.stdout()).toContain("started"), { timeoutMs: 20_000 });
    expect(scheduler.stdout()).toMatch(
      /started\s+scheduler \(pid \d+\) on \w+, checking every 200 ms: 1 schedule\(s\): test\.tick/,
    );
  });

  it("schedules/list: the stored schedule as JSON and as a table", async () => {
    const r = await cli("schedules", "list", "--json");
    expect(r.code, r.stderr).toBe(0);
    const rows = json<Row[]>(r);
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0] as object)).toEqual(KEYS);
    expect(rows[0]).toMatchObject({
      name: NAME,
      jobName: NAME,
      cron: null,
      every: 1000,
      args: { from: "schedule" },
      paused: false,
      catchUp: "latest",
    });
    expect(Number.isNaN(Date.parse(rows[0]?.nextRunAt ?? ""))).toBe(false);
    const table = await cli("schedules", "list");
    expect(table.stdout).toMatch(/NAME\s+JOB\s+WHEN\s+STATE\s+NEXT\s+LAST\s+LAST JOB/);
    expect(table.stdout).toMatch(/test\.tick\s+test\.tick\s+every 1s\s+active/);
  });

  it("schedules/history: the running scheduler's fired ticks, newest first", async () => {
    await eventually(
      async () =>
        expect((await history()).filter((t) => t.outcome === "fired").length).toBeGreaterThanOrEqual(2),
      { timeoutMs: 20_000 },
    );
    const ticks = await history();
    expect(Object.keys(ticks[0] as object)).toEqual(["tickAt", "outcome", "jobId", "reason", "recordedAt"]);
    const fired = ticks.filter((t) => t.outcome === "fired");
    const times = ticks.map((t) => Date.parse(t.tickAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const t of fired) {
      const job = await app.jobs.get(t.jobId as string);
      expect(job).toMatchObject({ jobName: NAME, args: { from: "schedule" } });
    }
    const limited = await cli("schedules", "history", NAME, "--limit", "1", "--json");
    expect(json<Tick[]>(limited)).toHaveLength(1);
    const table = await cli("schedules", "history", NAME);
    expect(table.stdout).toMatch(/TICK\s+WHEN\s+OUTCOME\s+JOB\s+REASON/);
    expect(table.stdout).toMatch(/fired\s+[0-9a-f-]{36}/);
  });

  it("schedules/show and upcoming: one schedule; the next fire times one interval apart", async () => {
    const shown = await cli("schedules", "show", NAME, "--json");
    expect(shown.code, shown.stderr).toBe(0);
    const row = json<Row>(shown);
    expect(Object.keys(row)).toEqual(KEYS);
    expect(row).toMatchObject({ name: NAME, every: 1000 });
    expect(row.lastJobId).toMatch(/^[0-9a-f-]{36}$/);
    const text = await cli("schedules", "show", NAME);
    expect(text.stdout).toMatch(/when\s+every 1s/);
    expect(text.stdout).toMatch(/state\s+active/);
    const upcoming = await cli("schedules", "upcoming", NAME, "-n", "3", "--json");
    expect(upcoming.code, upcoming.stderr).toBe(0);
    const dates = json<string[]>(upcoming).map((d) => Date.parse(d));
    expect(dates).toHaveLength(3);
    const [a = 0, b = 0, c = 0] = dates;
    expect([b - a, c - b]).toEqual([1000, 1000]);
    const five = await cli("schedules", "upcoming", NAME);
    expect(five.stdout.trim().split("\n")).toHaveLength(5);
    expect(five.stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+Z \((in \d+ s|just now|\d+ s ago)\)$/m);
  });

  it("schedules/pause-resume: paused ticks are recorded skipped; resume fires again", async () => {
    const paused = await cli("schedules", "pause", NAME);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain(`paused ${NAME}`);
    expect(json<Row[]>(await cli("schedules", "list", "--json"))[0]?.paused).toBe(true);
    expect((await cli("schedules", "list")).stdout).toMatch(/every 1s\s+paused/);
    await eventually(async () => expect((await history())[0]?.outcome).toBe("skipped"), {
      timeoutMs: 20_000,
    });
    expect((await history())[0]?.reason).toBe("paused");
    const resumed = await cli("schedules", "resume", NAME, "--json");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(json(resumed)).toEqual({ name: NAME, resumed: true });
    expect(json<Row>(await cli("schedules", "show", NAME, "--json")).paused).toBe(false);
    await eventually(async () => expect((await history())[0]).toMatchObject({ outcome: "fired" }), {
      timeoutMs: 20_000,
    });
  });

  it("schedules/trigger: fires once now and prints the job id; the ledger says trigger", async () => {
    const r = await cli("schedules", "trigger", NAME);
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.match(/^triggered test\.tick: job ([0-9a-f-]{36})$/m)?.[1];
    expect(id, r.stdout).toBeDefined();
    expect(await app.jobs.get(id as string)).toMatchObject({ jobName: NAME, args: { from: "schedule" } });
    const ticks = await cli("schedules", "history", NAME, "--limit", "1000", "--json");
    expect(json<Tick[]>(ticks)).toContainEqual(
      expect.objectContaining({ outcome: "fired", reason: "trigger", jobId: id }),
    );
    const asJson = await cli("schedules", "trigger", NAME, "--json");
    const doc = json<{ name: string; jobId: string }>(asJson);
    expect(Object.keys(doc)).toEqual(["name", "jobId"]);
    expect(doc.name).toBe(NAME);
    expect((await app.jobs.get(doc.jobId))?.jobName).toBe(NAME);
  });

  it("status: the schedules section and status --json list the stored schedule", async () => {
    const r = await cli("status");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Schedules\nNAME\s+JOB\s+WHEN\s+STATE\s+NEXT/);
    expect(r.stdout).toMatch(/test\.tick\s+test\.tick\s+every 1s\s+active\s+(in \d+ s|just now|\d+ s ago)/);
    const view = json<{ schedules: Row[] }>(await cli("status", "--json"));
    expect(view.schedules.map((x) => x.name)).toEqual([NAME]);
    expect(Object.keys(view.schedules[0] as object)).toEqual(KEYS);
  });

  it("schedules/unknown-name: every command exits 1 with SONIQ_CLI_NOT_FOUND", async () => {
    const commands = [
      ["show", UNKNOWN],
      ["upcoming", UNKNOWN, "-n", "3"],
      ["history", UNKNOWN],
      ["pause", UNKNOWN],
      ["resume", UNKNOWN],
      ["trigger", UNKNOWN],
      ["remove", UNKNOWN],
    ];
    const results = await Promise.all(commands.map((c) => cli("schedules", ...c)));
    for (const [i, r] of results.entries()) {
      expect(r.code, commands[i]?.join(" ")).toBe(1);
      expect(r.stderr).toMatch(/^error \[SONIQ_CLI_NOT_FOUND\] no schedule named no\.such\.schedule\./);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect((await cli("schedules", "upcoming", NAME, "-n", "0")).code).toBe(2);
  });

  it("schedules/remove: deletes the schedule; the running scheduler does not bring it back", async () => {
    const r = await cli("schedules", "remove", NAME);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`removed ${NAME}`);
    expect(json(await cli("schedules", "list", "--json"))).toEqual([]);
    expect((await cli("schedules", "list")).stdout).toContain("no schedules.");
    expect((await cli("schedules", "show", NAME)).code).toBe(1);
  });

  it("scheduler/sigterm: stops gracefully, releasing leadership, exit 0", async () => {
    scheduler.child.kill("SIGTERM");
    const exited = await scheduler.exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect(exited.stdout).toMatch(/stopping\s+SIGTERM: releasing leadership/);
    expect(exited.stdout).toContain("stopped gracefully");
  });

  it("worker/--schedules: the worker runs a scheduler that stores and fires the declaration", async () => {
    const worker = start(["worker", MODULE, "--schedules", "--log-format", "json"], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url },
    });
    await eventually(() => expect(worker.stdout()).toContain('"schedules":true'), { timeoutMs: 20_000 });
    await eventually(
      async () => {
        const fired = (await history()).find((t) => t.outcome === "fired" && t.reason !== "trigger");
        expect(fired).toBeDefined();
        expect((await app.jobs.get(fired?.jobId as string))?.status).toBe("done");
      },
      { timeoutMs: 30_000 },
    );
    worker.child.kill("SIGTERM");
    const exited = await worker.exited;
    expect(exited.code, exited.stderr).toBe(0);
  });
});
