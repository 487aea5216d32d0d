import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { json, openApp, soniqCli, soniqOnTty, start } from "./cli.js";
import { BACKENDS, STAT_KEYS, useSeededDatabase } from "./seed.js";

describe.each(BACKENDS)("soniq on %s", (_kind, makeDb) => {
  const s = useSeededDatabase(makeDb);
  const cli = s.cli;

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
    const args = ["status", "--database-url", s.db.url];
    expect((await soniqOnTty(args, "", { cwd: s.db.dir })).stdout).toContain("\u001b[1m");
    const plain = await soniqOnTty(args, "", { cwd: s.db.dir, env: { NO_COLOR: "1" } });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("Dead letters");
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("status/json: { stats, queues, workers, schedules, replication } with the six stat keys", async () => {
    const r = await cli("status", "--json");
    expect(r.code).toBe(0);
    const view = json<Record<string, unknown>>(r);
    expect(Object.keys(view).sort()).toEqual(["queues", "replication", "schedules", "stats", "workers"]);
    // No readConnectionString here: every read goes to the one database.
    expect(view.replication).toEqual({ readReplica: false, lagMs: null });
    expect(Object.keys(view.stats as object).sort()).toEqual(STAT_KEYS);
    expect(view.stats).toEqual(await s.app.jobs.stats());
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
    const watch = start(["status", "--watch", "0.2", "--json", "--database-url", s.db.url], {
      cwd: s.db.dir,
    });
    await eventually(() => expect(watch.stdout().match(/"stats"/g)?.length ?? 0).toBeGreaterThanOrEqual(2), {
      timeoutMs: 15_000,
    });
    watch.child.kill("SIGTERM");
    const exited = await watch.exited;
    expect(exited.code).toBe(0);
    const docs = exited.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { stats: object }); // JSON lines
    for (const doc of docs) expect(Object.keys(doc.stats).sort()).toEqual(STAT_KEYS);
  });

  it("workers/list: the fixture's worker, stopped, with its heartbeat and job names", async () => {
    const r = await cli("workers", "--json");
    expect(r.code).toBe(0);
    const workers = json<{ state: string; status: string; concurrency: number; jobNames: string[] }[]>(r);
    const seeded = workers.find((w) => w.concurrency === 10);
    expect(seeded).toMatchObject({ state: "stopped", status: "stopped" });
    expect(seeded?.jobNames).toEqual(expect.arrayContaining(["test.fail", "test.ok"]));
    const table = await cli("workers");
    expect(table.stdout).toMatch(/ID\s+STATE\s+HOST\s+PID\s+QUEUES/);
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
      new RegExp(`${id}\\s+test\\.ok\\s+queued\\s+emails\\s+0/3\\s+(just now|\\d+ (s|min) ago)`),
    );
    const shown = await cli("jobs", "show", id, "--json");
    expect(json<{ id: string; args: unknown }>(shown)).toMatchObject({ id, args: { n: 3 } });
    expect((await cli("jobs", "show", id)).stdout).toMatch(/name\s+test\.ok/);
    const missing = await cli("jobs", "show", "00000000-0000-4000-8000-000000000000");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error \[SONIQ_CLI_NOT_FOUND\]/);
    expect((await cli("jobs", "list", "--status", "dead")).code).toBe(2);
  });

  it("jobs/show-trace: shows the trace id a tracing plugin stored at enqueue", async () => {
    const traced = await openApp(s.db);
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    traced.use({ producer: (_event, send) => send({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` }) });
    try {
      const { id } = await traced.jobs.enqueue("test.ok", { n: 11 }, { queue: "traced" });
      expect(json<{ traceId: string }>(await cli("jobs", "show", id, "--json")).traceId).toBe(traceId);
      expect((await cli("jobs", "show", id)).stdout).toMatch(new RegExp(`trace\\s+${traceId}`));
      await traced.jobs.cancel(id);
    } finally {
      await traced.close();
    }
  });

  it("jobs/show-args-version: a versioned job shows its version, an unversioned one says so; --json carries it", async () => {
    const { id } = await s.app.jobs.enqueue("test.ok", { n: 7 }, { queue: "versions_q", version: 3 });
    const shown = await cli("jobs", "show", id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^args version\s+3$/m);
    expect(json<{ argsVersion: number | null }>(await cli("jobs", "show", id, "--json")).argsVersion).toBe(3);
    // The seed's jobs were enqueued by name without a version: stored unversioned (taken as current).
    const [plain] = await s.app.jobs.list({ queue: "emails", limit: 1 });
    const plainId = plain?.id as string;
    expect((await cli("jobs", "show", plainId)).stdout).toMatch(/^args version\s+unversioned$/m);
    expect(
      json<{ argsVersion: unknown }>(await cli("jobs", "show", plainId, "--json")).argsVersion,
    ).toBeNull();
    expect(await s.app.jobs.cancel(id)).toBe(true);
  });

  it("jobs/cancel: cancels a queued job; a second cancel exits 1", async () => {
    const { id } = await s.app.jobs.enqueue("test.ok", { n: 9 }, { queue: "cancel_me" });
    const r = await cli("jobs", "cancel", id, "--json");
    expect(r.code).toBe(0);
    expect(json(r)).toEqual([{ id, cancelled: true }]);
    expect((await s.app.jobs.get(id))?.status).toBe("cancelled");
    const again = await cli("jobs", "cancel", id);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain(`not cancelled ${id}`);
  });

  it("queues/unknown-name-refused: pause, resume and configure of a queue nothing knows exit 2 and write nothing", async () => {
    for (const args of [
      ["queues", "pause", "nosuchqueue"],
      ["queues", "resume", "nosuchqueue"],
      ["queues", "configure", "nosuchqueue", "--concurrency", "2"],
    ]) {
      const r = await cli(...args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/\[SONIQ_UNKNOWN_QUEUE\] .*no queue named "nosuchqueue".*--create/);
    }
    const queues = json<{ name: string }[]>(await cli("queues", "list", "--json"));
    expect(queues.map((q) => q.name)).not.toContain("nosuchqueue");
    expect(json<unknown[]>(await cli("audit", "--action", "queue.pause", "--json")).length).toBe(0);
  });

  it("queues/controls-and-audit: pause, resume and configure exit 0 and are in the audit log", async () => {
    for (const args of [
      ["queues", "pause", "emails", "--create"],
      ["queues", "resume", "emails"],
      ["queues", "configure", "emails", "--concurrency", "2"],
    ]) {
      const r = await cli(...args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    const audit = await cli("audit", "--json");
    expect(audit.code, audit.stderr).toBe(0);
    expect(audit.stdout).toContain("queue.pause");
    expect(audit.stdout).toContain("queue.configure");
    const pauses = json<{ action: string; actor: string; target: string }[]>(
      await cli("audit", "--action", "queue.pause", "--json"),
    );
    expect(pauses.length).toBeGreaterThan(0);
    for (const row of pauses) {
      expect(row).toMatchObject({ action: "queue.pause", target: "emails" });
      expect(row.actor).toMatch(/^cli:.+@.+/);
    }
    expect((await cli("audit", "--action", "queue.explode")).code).toBe(2); // core's actions only
    const queues = json<{ name: string; paused: boolean; concurrency: number | null }[]>(
      await cli("queues", "list", "--json"),
    );
    expect(queues.find((q) => q.name === "emails")).toMatchObject({ paused: false, concurrency: 2 });
    // The dashboard's words (core's queueStateWord, queueLimitsText): "active", and the limits set.
    const table = (await cli("queues", "list")).stdout.split("\n").find((l) => l.startsWith("emails"));
    expect(table).toMatch(/\bactive\b.*concurrency 2/);
  });

  it("dashboard/gates: a bad --port is usage; without @soniq/dashboard, or with one lacking serveDashboard(), exit 1", async () => {
    const dashboard = await cli("dashboard", "--port", "http");
    expect(dashboard.code).toBe(2); // --port takes 0 to 65535
    const noDashboard = await cli("dashboard");
    expect(noDashboard.code).toBe(1);
    expect(noDashboard.stderr).toMatch(
      /^error \[SONIQ_CLI_MISSING_PACKAGE\] soniq dashboard needs @soniq\/dashboard/,
    );
    // The package comes from the application's project, whatever its version: an older one is named, not run.
    const project = join(s.db.dir, "old-dashboard-project");
    const pkg = join(project, "node_modules", "@soniq", "dashboard");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "@soniq/dashboard", version: "0.0.1", type: "module", main: "index.js" }),
    );
    writeFileSync(join(pkg, "index.js"), "export const dashboard = () => {};\n");
    const old = await soniqCli(["dashboard", "--database-url", s.db.url], { cwd: project });
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(
      /^error \[SONIQ_CLI_UNSUPPORTED\] this @soniq\/dashboard exports no serveDashboard\(\)\. Upgrade @soniq\/dashboard\./,
    );
  });
  it("jobs/show-progress: a running job's progress as a bar with its value; --json carries it", async () => {
    const { id } = await s.app.jobs.enqueue("test.ok", { n: 9 }, { queue: "progress_q" });
    const claimed = await s.app.backend.runs.claim({ queues: ["progress_q"], limit: 1, workerId: null });
    expect(claimed.jobs.map((j) => j.id)).toEqual([id]);
    await s.app.backend.runs.reportProgress([{ id, attempt: 1, value: { done: 1, total: 4 } }]);
    const shown = await cli("jobs", "show", id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/progress\s+\[#####\.{15}\] 25%\s+\{"done":1,"total":4\}/);
    expect(json<{ progress: unknown }>(await cli("jobs", "show", id, "--json")).progress).toEqual({
      done: 1,
      total: 4,
    });
    expect(await s.app.jobs.cancel(id)).toBe(true);
  });
});
