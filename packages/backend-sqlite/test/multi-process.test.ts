/**
 * Several processes on one file: BEGIN IMMEDIATE claims hand each job to exactly one process, and a
 * process killed while it holds claimed jobs leaves a readable file whose jobs stale recovery requeues.
 */
import { randomUUID } from "node:crypto";
import type { StaleRecovery } from "@soniq/core";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../src/index.js";
import { eventually, newJob, runFixture, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

describe("sqlite/multi-process", () => {
  it("two processes draining one file run each job exactly once", async () => {
    const file = tmp.file();
    const backend = sqliteBackend({ filename: file });
    await backend.migrate();
    const jobs = Array.from({ length: 2000 }, () => newJob());
    await backend.enqueueMany(jobs);
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
    expect(await backend.getQueueStats()).toMatchObject({ done: jobs.length, queued: 0, processing: 0 });
    const attempts = await backend.listJobs({ limit: 1000 });
    expect(attempts.every((j) => j.attempts === 1)).toBe(true);
    await backend.close();
  }, 90_000);

  it("the file survives a process killed while it holds claimed jobs; recovery requeues them", async () => {
    const file = tmp.file();
    const backend = sqliteBackend({ filename: file });
    await backend.migrate();
    const jobs = Array.from({ length: 5 }, () => newJob());
    await backend.enqueueMany(jobs);
    await backend.close();

    const workerId = randomUUID();
    const child = runFixture("crash-child", [file, workerId, "5"]);
    await child.waitFor("CLAIMED");
    // Let it write for a moment so the kill lands in the middle of its loop of write transactions.
    await eventually(() => {
      const db = new Database(file, { readonly: true });
      const n = (
        db.prepare("SELECT COUNT(*) AS n FROM soniq_jobs WHERE queue = 'filler'").get() as { n: number }
      ).n;
      db.close();
      return n > 20;
    });
    child.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    const reopened = sqliteBackend({ filename: file });
    const db = new Database(file, { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
    const held = await reopened.listJobs({ status: "processing" });
    expect(held.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(held.every((j) => j.workerId === workerId && j.attempts === 1)).toBe(true);

    // The dead worker stops heartbeating; once it is older than the threshold, its jobs come back.
    const recovery = await eventually<StaleRecovery | null>(async () => {
      const r = await reopened.recoverStaleWorkers(100);
      return r.workerIds.length > 0 ? r : null;
    });
    expect(recovery.workerIds).toEqual([workerId]);
    expect(recovery.requeuedJobIds.sort()).toEqual(jobs.map((j) => j.id).sort());
    const again = await reopened.claim({ queues: ["default"], limit: 10, workerId: null });
    expect(again.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(again.every((j) => j.attempts === 2)).toBe(true);
    await reopened.close();
  }, 60_000);
});
