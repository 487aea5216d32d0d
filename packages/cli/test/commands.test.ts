/**
 * Every command of the built binary against a real database, once on SQLite and once on PostgreSQL: output,
 * `--json` shapes, exit codes, refusals. Flags go after the subcommand, as users type them.
 */
import { writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PermanentError, type Soniq } from "@soniq/core";
import { eventually } from "@soniq/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBuilt,
  expectNoRunningChildren,
  FIXTURE,
  json,
  openApp,
  postgresDb,
  type Result,
  soniqCli,
  soniqOnTty,
  sqliteDb,
  start,
  type TestDb,
} from "./cli.js";

const STAT_KEYS = ["cancelled", "dead_letter", "done", "processing", "queued", "total"];

describe.each([
  ["sqlite", sqliteDb],
  ["postgres", postgresDb],
])("soniq on %s", (_kind, makeDb) => {
  let db: TestDb;
  let app: Soniq;
  let firstWorker: Result;
  const cli = (...args: string[]) => soniqCli([...args, "--database-url", db.url], { cwd: db.dir });

  beforeAll(async () => {
    assertBuilt();
    db = makeDb();
    await db.create();
    const setup = await cli("setup");
    expect(setup.code, setup.stderr).toBe(0);
    app = await openApp(db);
    for (let i = 0; i < 3; i++) await app.enqueue("test.fail", { i }, { queue: "failing" });
    await app.enqueue("test.orphan", {}, { queue: "orphans" });
    // The fixture's worker dead-letters test.fail (PermanentError) and test.orphan (no handler), and registers
    // its own job names in the task registry.
    const worker = start(["worker", FIXTURE], { cwd: db.dir, env: { SONIQ_DATABASE_URL: db.url } });
    await eventually(async () => expect(await app.deadLetter.list()).toHaveLength(4), { timeoutMs: 20_000 });
    worker.child.kill("SIGTERM");
    firstWorker = await worker.exited;
    await app.enqueue("test.ok", { n: 1 });
    await app.enqueue("test.ok", { n: 2 });
    await app.enqueue("test.ok", { n: 3 }, { queue: "emails" });
  });

  afterAll(async () => {
    expectNoRunningChildren();
    await app?.close();
    await db?.drop();
  });

  it("worker/startup-and-log: prints what it serves, logs each outcome, exits 0 on SIGTERM", () => {
    expect(firstWorker.code, firstWorker.stderr).toBe(0);
    expect(firstWorker.stdout).toMatch(
      /started\s+worker \w{8} \(pid \d+\) on \w+: queues \*, concurrency 10, 3 job\(s\): test\.ok, test\.fail, test\.hold/,
    );
    expect(firstWorker.stdout).toMatch(/dead\s+test\.fail \w{8} permanent_failure: PermanentError/);
    expect(firstWorker.stdout).toMatch(/dead\s+test\.orphan \w{8} job_not_found/);
    expect(firstWorker.stdout).toContain("stopped gracefully");
  });

  it("setup/idempotent and migrate-status: up to date, nothing pending", async () => {
    const again = await cli("setup");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("up to date");
    const status = await cli("migrate-status", "--json");
    expect(status.code).toBe(0);
    const report = json<{ applied: string[]; pending: string[] }>(status);
    expect(report.pending).toEqual([]);
    expect(report.applied.length).toBeGreaterThan(0);
  });

  it("status/screen: stats, queues with lag, workers, schedules, dead letters", async () => {
    const r = await cli("status");
    expect(r.code, r.stderr).toBe(0);
    for (const part of [
      "Queues",
      "Workers",
      "Schedules",
      "Dead letters (4)",
      "failing",
      "emails",
      "test.orphan",
    ]) {
      expect(r.stdout).toContain(part);
    }
    expect(r.stdout).toMatch(/jobs\s+total \d+\s+queued \d+/);
    expect(r.stdout).toContain("Workers (0 live, 1 stopped)"); // the fixture's worker stopped in beforeAll
    expect(r.stdout).toMatch(
      /by reason: (permanent_failure 3, job_not_found 1|job_not_found 1, permanent_failure 3)/,
    );
    expect(r.stdout).not.toContain("\u001b["); // not a TTY: no colour
  });

  it("status/colour: colour on a terminal, none with NO_COLOR", async () => {
    const args = ["status", "--database-url", db.url];
    expect((await soniqOnTty(args, "", { cwd: db.dir })).stdout).toContain("\u001b[1m");
    const plain = await soniqOnTty(args, "", { cwd: db.dir, env: { NO_COLOR: "1" } });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("Dead letters");
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("status/json: { stats, queues, workers, schedules } with the six stat keys", async () => {
    const r = await cli("status", "--json");
    expect(r.code).toBe(0);
    const view = json<Record<string, unknown>>(r);
    expect(Object.keys(view).sort()).toEqual(["queues", "schedules", "stats", "workers"]);
    expect(Object.keys(view.stats as object).sort()).toEqual(STAT_KEYS);
    expect(view.stats).toEqual(await app.getQueueStats());
    const queues = view.queues as { name: string; stats: Record<string, number>; lagMs: number | null }[];
    expect(queues.map((q) => q.name)).toEqual(
      expect.arrayContaining(["default", "emails", "failing", "orphans"]),
    );
    expect(queues.find((q) => q.name === "failing")?.stats.dead_letter).toBeGreaterThanOrEqual(3);
    expect(typeof queues.find((q) => q.name === "emails")?.lagMs).toBe("number");
    expect(Array.isArray(view.workers)).toBe(true);
    expect(view.schedules).toEqual([]);
  });

  it("status/watch: redraws until SIGTERM, then exits 0", async () => {
    const watch = start(["status", "--watch", "0.2", "--json", "--database-url", db.url], { cwd: db.dir });
    await eventually(() => expect(watch.stdout().match(/"stats"/g)?.length ?? 0).toBeGreaterThanOrEqual(2), {
      timeoutMs: 15_000,
    });
    watch.child.kill("SIGTERM");
    expect((await watch.exited).code).toBe(0);
  });

  it("workers/list: the fixture's worker, stopped, with its heartbeat", async () => {
    const r = await cli("workers", "--json");
    expect(r.code).toBe(0);
    const workers = json<{ status: string; concurrency: number; lastHeartbeat: string }[]>(r);
    expect(workers.some((w) => w.status === "stopped" && w.concurrency === 10)).toBe(true);
    const table = await cli("workers");
    expect(table.stdout).toMatch(/ID\s+HOST\s+PID\s+STATUS/);
    expect(table.stdout).toMatch(/stopped/);
  });

  it("queues/list: every queue with its stats and lag", async () => {
    const r = await cli("queues", "list", "--json");
    expect(r.code).toBe(0);
    const queues = json<{ name: string; stats: Record<string, number>; lagMs: number | null }[]>(r);
    const emails = queues.find((q) => q.name === "emails");
    expect(emails?.stats.queued).toBe(1);
    expect(Object.keys(emails?.stats ?? {}).sort()).toEqual(STAT_KEYS);
    expect((await cli("queues", "list")).stdout).toMatch(/QUEUE\s+STATE\s+QUEUED/);
  });

  it("jobs/list-and-show: filters, JSON arrays, one job, unknown id exits 1", async () => {
    const r = await cli("jobs", "list", "--status", "queued", "--queue", "emails", "--json");
    expect(r.code).toBe(0);
    const rows = json<{ id: string; jobName: string; status: string }[]>(r);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ jobName: "test.ok", status: "queued" });
    const id = rows[0]?.id as string;
    const table = await cli("jobs", "list", "--queue", "emails");
    expect(table.stdout).toMatch(/ID\s+NAME\s+STATUS\s+QUEUE\s+ATTEMPTS\s+SCHEDULED\s+CREATED/);
    expect(table.stdout).toMatch(
      new RegExp(`${id}\\s+test\\.ok\\s+queued\\s+emails\\s+0/3\\s+\\d+ (s|min) ago`),
    );
    const shown = await cli("jobs", "show", id, "--json");
    expect(json<{ id: string; args: unknown }>(shown)).toMatchObject({ id, args: { n: 3 } });
    expect((await cli("jobs", "show", id)).stdout).toMatch(/name\s+test\.ok/);
    const missing = await cli("jobs", "show", "00000000-0000-4000-8000-000000000000");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error \[SONIQ_CLI_NOT_FOUND\]/);
    expect((await cli("jobs", "list", "--status", "dead")).code).toBe(2);
  });

  it("jobs/cancel: cancels a queued job; a second cancel exits 1", async () => {
    const { id } = await app.enqueue("test.ok", { n: 9 }, { queue: "cancel_me" });
    const r = await cli("jobs", "cancel", id, "--json");
    expect(r.code).toBe(0);
    expect(json(r)).toEqual([{ id, cancelled: true }]);
    expect((await app.getJob(id))?.status).toBe("cancelled");
    const again = await cli("jobs", "cancel", id);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain(`not cancelled ${id}`);
  });

  it("dead-letter/list-and-show: filters, JSON, unknown id exits 1", async () => {
    const r = await cli("dead-letter", "list", "--reason", "permanent_failure", "--json");
    const rows = json<{ id: string; jobName: string }[]>(r);
    expect(rows.map((d) => d.jobName)).toEqual(["test.fail", "test.fail", "test.fail"]);
    const orphan = json<{ id: string; deadLetterReason: string }[]>(
      await cli("dead-letter", "list", "--name", "test.orphan", "--json"),
    );
    expect(orphan).toEqual([expect.objectContaining({ deadLetterReason: "job_not_found" })]);
    const table = await cli("dead-letter", "list", "--name", "test.orphan");
    expect(table.stdout).toMatch(/test\.orphan\s+orphans\s+job_not_found\s+1\/3\s+0\s+\d+ (s|min) ago/);
    const shown = await cli("dead-letter", "show", rows[0]?.id as string);
    expect(shown.stdout).toMatch(/reason\s+permanent_failure/);
    expect((await cli("dead-letter", "show", "nope")).code).toBe(1);
    expect((await cli("dead-letter", "list", "--since", "yesterday-ish")).code).toBe(2);
  });

  it("dead-letter/replay: by id, only registered names unless --force, unknown id exits 1", async () => {
    const [fail] = await app.deadLetter.list({ jobName: "test.fail", limit: 1 });
    const r = await cli("dead-letter", "replay", fail?.id as string, "--json");
    expect(r.code, r.stderr).toBe(0);
    const replayed = json<{ id: string; newId: string }[]>(r);
    expect(replayed).toHaveLength(1);
    const newId = replayed[0]?.newId as string;
    expect((await app.getJob(newId))?.status).toBe("queued");
    expect((await app.deadLetter.get(fail?.id as string))?.resurrectionCount).toBe(1);

    const [orphan] = await app.deadLetter.list({ jobName: "test.orphan" });
    const refused = await cli("dead-letter", "replay", orphan?.id as string);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\[SONIQ_CLI_REFUSED\] no worker has registered test\.orphan.*--force/);
    expect((await app.deadLetter.get(orphan?.id as string))?.resurrectionCount).toBe(0);
    const forced = await cli("dead-letter", "replay", orphan?.id as string, "--force");
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^replayed \S+ as \S+/);

    expect((await cli("dead-letter", "replay", "00000000-0000-4000-8000-000000000000")).code).toBe(1);
    expect((await cli("dead-letter", "replay")).code).toBe(2);
    expect((await cli("dead-letter", "replay", "--name", "test.fail")).code).toBe(2);
  });

  it("dead-letter/bulk-dry-run: prints the count and changes nothing", async () => {
    const r = await cli("dead-letter", "replay", "--all", "--name", "test.fail", "--dry-run");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("would replay 3 dead-letter job(s)");
    const asJson = await cli(
      "dead-letter",
      "purge",
      "--all",
      "--reason",
      "permanent_failure",
      "--dry-run",
      "--json",
    );
    expect(json(asJson)).toEqual({ count: 3 });
    expect(await app.deadLetter.list({ jobName: "test.fail" })).toHaveLength(3);
  });

  it("dead-letter/purge-all: refused without --yes off a TTY (exit 1, nothing changed), done with it", async () => {
    const local = await openApp(db, false);
    local.job(
      "test.purge_me",
      async () => {
        throw new PermanentError("purge fodder");
      },
      { queue: "purge" },
    );
    for (let i = 0; i < 2; i++) await local.enqueue("test.purge_me", { i });
    await local.worker({ queues: ["purge"] }).runOnce();
    await local.close();
    expect(await app.deadLetter.list({ queue: "purge" })).toHaveLength(2);

    const refused = await cli("dead-letter", "purge", "--all", "--queue", "purge");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /\[SONIQ_CLI_REFUSED\] refusing to purge 2 dead-letter job\(s\) without confirmation: pass --yes/,
    );
    expect(await app.deadLetter.list({ queue: "purge" })).toHaveLength(2);

    const done = await cli("dead-letter", "purge", "--all", "--queue", "purge", "--yes", "--json");
    expect(done.code).toBe(0);
    expect(json<{ purged: boolean }[]>(done).map((r) => r.purged)).toEqual([true, true]);
    expect(await app.deadLetter.list({ queue: "purge" })).toHaveLength(0);
    expect((await cli("dead-letter", "purge", "00000000-0000-4000-8000-000000000000")).code).toBe(1);
  });

  it("dead-letter/tty-confirm: on a terminal a bulk purge asks; no keeps the rows (exit 1), yes purges", async () => {
    const local = await openApp(db, false);
    local.job(
      "test.tty_me",
      async () => {
        throw new PermanentError("tty fodder");
      },
      { queue: "tty" },
    );
    await local.enqueue("test.tty_me", {});
    await local.worker({ queues: ["tty"] }).runOnce();
    await local.close();
    const args = ["dead-letter", "purge", "--all", "--queue", "tty", "--database-url", db.url];
    const no = await soniqOnTty(args, "n\n", { cwd: db.dir });
    expect(no.stdout).toContain("purge 1 dead-letter job(s)? [y/N]");
    expect(no.code).toBe(1);
    expect(await app.deadLetter.list({ queue: "tty" })).toHaveLength(1);
    const yes = await soniqOnTty(args, "y\n", { cwd: db.dir });
    expect(yes.code, yes.stdout).toBe(0);
    expect(yes.stdout).toContain("purged 1 dead-letter job(s)");
    expect(yes.stdout).toContain("purging [##############################] 1/1"); // the progress bar
    expect(await app.deadLetter.list({ queue: "tty" })).toHaveLength(0);
  });

  it("dead-letter/export: JSON lines or CSV to --output, the count on stderr", async () => {
    const jsonl = join(db.dir, "dead.jsonl");
    const r = await cli("dead-letter", "export", "--name", "test.fail", "--output", jsonl);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`exported 3 dead-letter job(s) to ${jsonl}`);
    const lines = (await readFile(jsonl, "utf8")).trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as { jobName: string }).jobName)).toEqual([
      "test.fail",
      "test.fail",
      "test.fail",
    ]);
    const csv = await cli("dead-letter", "export", "--name", "test.fail", "--format", "csv");
    expect(csv.stdout).toMatch(/^id,jobName,queue,priority,attempts,maxAttempts,deadLetterReason/);
    // One record per dead letter; the multi-line last errors are quoted cells.
    for (const row of await app.deadLetter.list({ jobName: "test.fail" })) {
      expect(csv.stdout).toContain(`\n${row.id},test.fail,failing,`);
    }
    expect(csv.stderr).toContain("exported 3 dead-letter job(s)");
  });

  it("gated/missing-core-api: commands awaiting core exit 1 naming what is missing", async () => {
    const gated: [string[], string][] = [
      [["queues", "pause", "emails"], "soniq.queues.pause()"],
      [["queues", "resume", "emails"], "soniq.queues.resume()"],
      [["queues", "configure", "emails", "--concurrency", "2"], "soniq.queues.configure()"],
      [["schedules", "list"], "soniq.schedules.list()"],
      [["schedules", "trigger", "reports.daily"], "soniq.schedules.trigger()"],
      [["jobs", "explain", "00000000-0000-4000-8000-000000000000"], "soniq.explain()"],
      [["audit"], "soniq.audit.list()"],
    ];
    for (const [args, missing] of gated) {
      const r = await cli(...args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toMatch(/^error \[SONIQ_CLI_UNSUPPORTED\]/);
      expect(r.stderr).toContain(missing);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    const dashboard = await cli("dashboard", "--port", "0");
    expect(dashboard.code).toBe(2); // --port takes a whole number >= 1
    const noDashboard = await cli("dashboard");
    expect(noDashboard.code).toBe(1);
    expect(noDashboard.stderr).toMatch(
      /^error \[SONIQ_CLI_MISSING_PACKAGE\] soniq dashboard needs @soniq\/dashboard/,
    );
    const scheduler = await soniqCli(["scheduler", FIXTURE], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url },
    });
    expect(scheduler.code).toBe(1);
    expect(scheduler.stderr).toContain("has no scheduler");
    const schedules = await soniqCli(["worker", FIXTURE, "--schedules"], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url },
    });
    expect(schedules.code).toBe(1);
    expect(schedules.stderr).toContain("has no scheduler");
  });

  it("worker/module-backend-wins: a --database-url of another kind is a usage error", async () => {
    const other = db.kind === "sqlite" ? "postgres://postgres@127.0.0.1:5432/test" : "sqlite:./other.db";
    const r = await soniqCli(["worker", FIXTURE, "--database-url", other], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /\[SONIQ_CLI_USAGE\] --database-url names a \w+ database, but .* builds its own/,
    );
  });

  it("worker/sigterm-finishes-in-flight: a job running at SIGTERM completes, then exit 0", async () => {
    const release = join(db.dir, "release-hold");
    const { id } = await app.enqueue("test.hold", { release }, { queue: "hold" });
    const worker = start(
      ["worker", FIXTURE, "--queues", "hold", "--concurrency", "2", "--log-format", "json"],
      {
        cwd: db.dir,
        env: { SONIQ_DATABASE_URL: db.url },
      },
    );
    await eventually(async () => expect((await app.getJob(id))?.status).toBe("processing"), {
      timeoutMs: 20_000,
    });
    worker.child.kill("SIGTERM");
    await eventually(() => expect(worker.stdout()).toContain('"event":"stopping"'), { timeoutMs: 10_000 });
    expect(worker.child.exitCode).toBeNull(); // still waiting for the job
    expect((await app.getJob(id))?.status).toBe("processing");
    writeFileSync(release, "go");
    const exited = await worker.exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect((await app.getJob(id))?.status).toBe("done");
    const events = exited.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; level: string; time: string; queues?: string[] });
    expect(events.map((e) => e.event)).toEqual(["started", "stopping", "done", "stopped"]);
    expect(events[0]?.queues).toEqual(["hold"]);
  });

  it("worker/second-signal-forces: a second SIGTERM exits 1 at once; the job stays for recovery", async () => {
    const { id } = await app.enqueue("test.hold", { release: join(db.dir, "never") }, { queue: "forced" });
    const worker = start(["worker", FIXTURE, "--queues", "forced"], {
      cwd: db.dir,
      env: { SONIQ_DATABASE_URL: db.url },
    });
    await eventually(async () => expect((await app.getJob(id))?.status).toBe("processing"), {
      timeoutMs: 20_000,
    });
    worker.child.kill("SIGTERM");
    await eventually(() => expect(worker.stdout()).toContain("stopping"), { timeoutMs: 10_000 });
    worker.child.kill("SIGTERM");
    const exited = await worker.exited;
    expect(exited.code).toBe(1);
    expect(exited.stdout).toMatch(/forced\s+SIGTERM again: exiting now/);
    expect((await app.getJob(id))?.status).toBe("processing"); // left for stale-worker recovery
    expect(await app.cancelJob(id)).toBe(true);
  });
});
