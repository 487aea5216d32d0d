/**
 * Several processes on one file: BEGIN IMMEDIATE claims hand each job to exactly one process, and a
 * process killed while it holds claimed jobs leaves a readable file whose jobs stale recovery requeues.
 */
import { randomUUID } from "node:crypto";
import { eventually, newJob } from "@soniq/testkit";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { runFixture, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

describe("sqlite/multi-process", () => {
  it("two processes draining one file run each job exactly once", async () => {
    const file = tmp.file();
    const backend = sqliteBackend({ filename: file });
    await backend.migrations.apply();
    const jobs = Array.from({ length: 2000 }, () => newJob());
    await backend.jobs.enqueueMany(jobs, {});
    const children = [randomUUID(), randomUUID()].map((id) => runFixture("drain-child", [file, id]));
    await Promise.all(children.map((c) => c.waitFor("READY")));
    for (const c of children) c.send("go");
    const results = await Promise.all(children.map((c) => c.exited));
    const perProcess = results.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      const line = r.stdout.split("\n").find((l) => l.startsWith("RAN "));
      return JSON.parse(String(line).slice(4)) as string[];
    });
    const all = perProcess.flat();
    expect(all).toHaveLength(jobs.length);
    expect(new Set(all).size).toBe(jobs.length);
    // Both processes took part (the claim lock alternates between them).
    for (const ran of perProcess) expect(ran.length).toBeGreaterThan(0);
    expect(await backend.jobs.stats({ queue: null })).toMatchObject({
      done: jobs.length,
      queued: 0,
      processing: 0,
    });
    const attempts = await backend.jobs.list({
      statuses: null,
      queue: null,
      jobName: null,
      q: null,
      ids: null,
      limit: 1000,
      offset: 0,
      position: null,
    });
    expect(attempts.every((j) => j.attempts === 1)).toBe(true);
    await backend.close();
  }, 90_000);

  it("the file survives a process killed while it holds claimed jobs; recovery requeues them", async () => {
    const file = tmp.file();
    const backend = sqliteBackend({ filename: file });
    await backend.migrations.apply();
    const jobs = Array.from({ length: 5 }, () => newJob());
    await backend.jobs.enqueueMany(jobs, {});
    await backend.close();

    const workerId = randomUUID();
    const child = runFixture("crash-child", [file, workerId, "5"]);
    await child.waitFor("CLAIMED");
    // Let it write for a moment so the kill lands in the middle of its loop of write transactions.
    await eventually(
      () => {
        const db = new Database(file, { readonly: true });
        const n = (
          db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs WHERE queue = 'filler'").get() as { n: number }
        ).n;
        db.close();
        expect(n).toBeGreaterThan(20);
      },
      { timeoutMs: 10_000 },
    );
    child.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    const reopened = sqliteBackend({ filename: file });
    const db = new Database(file, { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
    const held = await reopened.jobs.list({
      statuses: ["processing"],
      queue: null,
      jobName: null,
      q: null,
      ids: null,
      limit: 100,
      offset: 0,
      position: null,
    });
    expect(held.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(held.every((j) => j.workerId === workerId && j.attempts === 1)).toBe(true);

    // The dead worker stops heartbeating; once it is older than the threshold, its jobs come back.
    const recovery = await eventually(
      async () => {
        const r = await reopened.workers.recoverStale(100);
        expect(r.workerIds).toHaveLength(1);
        return r;
      },
      { timeoutMs: 10_000 },
    );
    expect(recovery.workerIds).toEqual([workerId]);
    expect(recovery.requeuedJobIds.sort()).toEqual(jobs.map((j) => j.id).sort());
    const again = (await reopened.runs.claim({ queues: ["default"], limit: 10, workerId: null })).jobs;
    expect(again.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(again.every((j) => j.attempts === 2)).toBe(true);
    await reopened.close();
  }, 60_000);
});
