/**
 * `soniq worker` on SQLite and PostgreSQL: what it prints, the module's own backend, graceful SIGTERM with a job
 * in flight, and the forced second signal.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { FIXTURE, soniqCli, start } from "./cli.js";
import { BACKENDS, useSeededDatabase } from "./seed.js";

describe.each(BACKENDS)("soniq on %s", (_kind, makeDb) => {
  const s = useSeededDatabase(makeDb);

  it("worker/startup-and-log: prints what it serves, logs each outcome, exits 0 on SIGTERM", () => {
    expect(s.firstWorker.code, s.firstWorker.stderr).toBe(0);
    expect(s.firstWorker.stdout).toMatch(
      /started\s+worker \w{8} \(pid \d+\) on \w+: queues \*, concurrency 10, 4 job\(s\): test\.ok, test\.fail, test\.retry, test\.hold/,
    );
    expect(s.firstWorker.stdout).toMatch(/dead\s+test\.fail \w{8} permanent_failure: PermanentError/);
    expect(s.firstWorker.stdout).toMatch(/dead\s+test\.orphan \w{8} job_not_found/);
    expect(s.firstWorker.stdout).toContain("stopped gracefully");
  });

  it("worker/module-backend-wins: a --database-url of another kind is a usage error", async () => {
    const other = s.db.kind === "sqlite" ? "postgres://postgres@127.0.0.1:5432/test" : "sqlite:./other.db";
    const r = await soniqCli(["worker", FIXTURE, "--database-url", other], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /\[SONIQ_CLI_USAGE\] --database-url names a \w+ database, but .* builds its own/,
    );
  });

  it("worker/sigterm-finishes-in-flight: a job running at SIGTERM completes, then exit 0", async () => {
    const release = join(s.db.dir, "release-hold");
    const { id } = await s.app.jobs.enqueue("test.hold", { release }, { queue: "hold" });
    const worker = start(
      ["worker", FIXTURE, "--queues", "hold", "--concurrency", "2", "--log-format", "json"],
      {
        cwd: s.db.dir,
        env: { SONIQ_DATABASE_URL: s.db.url },
      },
    );
    await eventually(async () => expect((await s.app.jobs.get(id))?.status).toBe("processing"), {
      timeoutMs: 20_000,
    });
    worker.child.kill("SIGTERM");
    await eventually(() => expect(worker.stdout()).toContain('"event":"stopping"'), { timeoutMs: 10_000 });
    expect(worker.child.exitCode).toBeNull(); // still waiting for the job
    expect((await s.app.jobs.get(id))?.status).toBe("processing");
    writeFileSync(release, "go");
    const exited = await worker.exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect((await s.app.jobs.get(id))?.status).toBe("done");
    const events = exited.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; level: string; time: string; queues?: string[] });
    expect(events.map((e) => e.event)).toEqual(["started", "stopping", "done", "stopped"]);
    expect(events[0]?.queues).toEqual(["hold"]);
  });

  it("worker/second-signal-forces: a second SIGTERM exits 1 at once; the job stays for recovery", async () => {
    const { id } = await s.app.jobs.enqueue(
      "test.hold",
      { release: join(s.db.dir, "never") },
      { queue: "forced" },
    );
    const worker = start(["worker", FIXTURE, "--queues", "forced"], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    await eventually(async () => expect((await s.app.jobs.get(id))?.status).toBe("processing"), {
      timeoutMs: 20_000,
    });
    worker.child.kill("SIGTERM");
    await eventually(() => expect(worker.stdout()).toContain("stopping"), { timeoutMs: 10_000 });
    worker.child.kill("SIGTERM");
    const exited = await worker.exited;
    expect(exited.code).toBe(1);
    expect(exited.stdout).toMatch(/forced\s+SIGTERM again: exiting now/);
    expect((await s.app.jobs.get(id))?.status).toBe("processing"); // left for stale-worker recovery
    expect(await s.app.jobs.cancel(id)).toBe(true);
  });
});
