/**
 * `soniq jobs explain <id>` through the built binary, on causes set up for real: a delayed job, a paused
 * queue, a cancelled job, the seed's dead letters (a real worker run), and, while a real `soniq worker` holds
 * jobs, a running job, full queue and group slots, a job waiting behind another, a rate-limited queue, a job
 * in its retry backoff and a done one. The tests assert the codes core produces, not their prose.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXPLAIN_CODES, type ExplainCode } from "@soniq/core";
import { eventually } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { FIXTURE, json, type Result, start } from "./cli.js";
import { BACKENDS, useSeededDatabase } from "./seed.js";

interface Explained {
  status: string | null;
  verdict: string;
  reasons: { code: ExplainCode; message: string; evidence: Record<string, unknown> }[];
}

const codes = (e: Explained) => e.reasons.map((r) => r.code);
const evidence = (e: Explained, code: ExplainCode) => e.reasons.find((r) => r.code === code)?.evidence;

/** The reason lines of the human output: `  - <code>: <message>`. */
const codeLines = (r: Result) => [...r.stdout.matchAll(/^ {2}- ([a-z_]+): /gm)].map((m) => m[1]);

/** Nobody is serving these jobs: no worker is live between the tests (the seed's worker stopped). */
const NOBODY: ExplainCode[] = ["no_worker_for_queue", "no_handler_for_job"];

describe.each(BACKENDS)("soniq jobs explain on %s", (_kind, makeDb) => {
  const s = useSeededDatabase(makeDb);
  const cli = s.cli;
  const explain = async (id: string): Promise<Explained> => {
    const r = await cli("jobs", "explain", id, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(json<object>(r)).sort()).toEqual(["reasons", "status", "verdict"]);
    return json<Explained>(r);
  };

  it("explain/scheduled-in-future: the time it becomes due; nobody serving it makes the verdict blocked", async () => {
    const { id } = await s.app.jobs.enqueue("test.ok", { n: 1 }, { queue: "later", delayMs: 3_600_000 });
    const e = await explain(id);
    expect(e).toMatchObject({ status: "queued", verdict: "blocked" });
    expect(codes(e)).toEqual(["scheduled_in_future", ...NOBODY]);
    const job = await s.app.jobs.get(id);
    expect(evidence(e, "scheduled_in_future")).toEqual({ until: job?.scheduledAt.toISOString() });
    expect(evidence(e, "no_worker_for_queue")).toEqual({ queue: "later", liveWorkers: 0 });
    expect(evidence(e, "no_handler_for_job")).toEqual({ jobName: "test.ok" });

    const human = await cli("jobs", "explain", id);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout.split("\n")[0]).toBe(`${id}: blocked (status queued)`);
    expect(codeLines(human)).toEqual(codes(e));
  });

  it("explain/queue-paused: a queue paused with soniq queues pause blocks the job", async () => {
    expect((await cli("queues", "pause", "paused_q", "--create")).code).toBe(0);
    const { id } = await s.app.jobs.enqueue("test.ok", { n: 2 }, { queue: "paused_q" });
    const e = await explain(id);
    expect(e).toMatchObject({ status: "queued", verdict: "blocked" });
    expect(codes(e)).toEqual(["queue_paused", ...NOBODY]);
    expect(evidence(e, "queue_paused")).toEqual({ queue: "paused_q", since: expect.any(String) });
    const human = await cli("jobs", "explain", id);
    expect(human.stdout.split("\n")[0]).toBe(`${id}: blocked (status queued)`);
    expect(codeLines(human)).toEqual(["queue_paused", ...NOBODY]);
  });

  it("explain/cancelled: a job cancelled with soniq jobs cancel", async () => {
    const { id } = await s.app.jobs.enqueue("test.ok", { n: 3 }, { queue: "cancelled_q" });
    expect((await cli("jobs", "cancel", id)).code).toBe(0);
    const e = await explain(id);
    expect(e).toMatchObject({ status: "cancelled", verdict: "cancelled" });
    expect(codes(e)).toEqual(["cancelled"]);
  });

  it("explain/dead-lettered: the seed's dead letters, with their reason and last error", async () => {
    const [fail] = await s.app.deadLetters.list({ jobName: "test.fail", limit: 1 });
    const e = await explain(fail?.id as string);
    expect(e).toMatchObject({ status: "dead_letter", verdict: "dead_lettered" });
    expect(codes(e)).toEqual(["dead_lettered"]);
    expect(evidence(e, "dead_lettered")).toMatchObject({
      reason: "permanent_failure",
      lastError: expect.stringContaining("the test asked for a failure"),
      attempts: 1,
    });
    const [orphan] = await s.app.deadLetters.list({ jobName: "test.orphan" });
    const o = await explain(orphan?.id as string);
    expect(codes(o)).toEqual(["dead_lettered"]);
    expect(evidence(o, "dead_lettered")).toMatchObject({ reason: "job_not_found" });
    const human = await cli("jobs", "explain", orphan?.id as string);
    expect(human.stdout.split("\n")[0]).toBe(`${orphan?.id}: dead_lettered (status dead_letter)`);
    expect(codeLines(human)).toEqual(["dead_lettered"]);
  });

  it("explain/not-found: an unknown id exits 1 with one error line, also with --json", async () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "nope"]) {
      for (const extra of [[], ["--json"]]) {
        const r = await cli("jobs", "explain", id, ...extra);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toMatch(
          new RegExp(`^error \\[SONIQ_CLI_NOT_FOUND\\] no job or dead letter with id ${id}\\.`),
        );
        expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      }
    }
    expect((await cli("jobs", "explain")).code).toBe(2); // the id is required
  });

  it("explain/live-worker: running, queue and group slots full, waiting behind, rate limited, retry backoff, done", async () => {
    const release = join(s.db.dir, "release-explain");
    for (const args of [
      ["queues", "configure", "holding", "--concurrency", "2", "--group-concurrency", "1", "--create"],
      ["queues", "configure", "finish", "--rate", "1/1h", "--create"],
    ]) {
      const r = await cli(...args);
      expect(r.code, r.stderr).toBe(0);
    }
    const held = await s.app.jobs.enqueue("test.hold", { release }, { queue: "holding", group: "g1" });
    const other = await s.app.jobs.enqueue("test.hold", { release }, { queue: "holding", group: "g2" });
    const finished = await s.app.jobs.enqueue("test.ok", { n: 4 }, { queue: "finish" });
    const retried = await s.app.jobs.enqueue("test.retry", {}, { queue: "retrying" });
    const worker = start(["worker", FIXTURE, "--queues", "holding,finish,retrying"], {
      cwd: s.db.dir,
      env: { SONIQ_DATABASE_URL: s.db.url },
    });
    try {
      await eventually(
        async () => {
          expect((await s.app.jobs.get(held.id))?.status).toBe("processing");
          expect((await s.app.jobs.get(other.id))?.status).toBe("processing");
          expect((await s.app.jobs.get(finished.id))?.status).toBe("done");
          expect((await s.app.jobs.get(retried.id))?.attempts).toBe(1);
        },
        { timeoutMs: 20_000 },
      );

      const running = await explain(held.id);
      expect(running).toMatchObject({ status: "processing", verdict: "running" });
      expect(codes(running)).toEqual(["running"]);
      const workerId = (await s.app.jobs.get(held.id))?.workerId;
      expect(evidence(running, "running")).toMatchObject({ workerId, pid: worker.child.pid });

      // Both slots of "holding" are taken, and group g1's only slot: the worker cannot claim this one.
      const sameGroup = await s.app.jobs.enqueue("test.hold", { release }, { queue: "holding", group: "g1" });
      const blocked = await explain(sameGroup.id);
      expect(blocked).toMatchObject({ status: "queued", verdict: "blocked" });
      expect(codes(blocked)).toEqual(["queue_concurrency_full", "group_concurrency_full"]);
      const holders = (code: ExplainCode) =>
        ((evidence(blocked, code)?.holders ?? []) as { id: string }[]).map((h) => h.id).sort();
      expect(holders("queue_concurrency_full")).toEqual([held.id, other.id].sort());
      expect(holders("group_concurrency_full")).toEqual([held.id]);

      const behind = await s.app.jobs.enqueue("test.hold", { release }, { queue: "holding" });
      const waiting = await explain(behind.id);
      expect(codes(waiting)).toEqual(["queue_concurrency_full", "waiting_behind"]);
      expect(evidence(waiting, "waiting_behind")).toMatchObject({ ahead: 1 });

      const limited = await s.app.jobs.enqueue("test.ok", { n: 5 }, { queue: "finish" });
      const rate = await explain(limited.id);
      expect(rate).toMatchObject({ status: "queued", verdict: "blocked" });
      expect(codes(rate)).toEqual(["rate_limited"]);
      expect(evidence(rate, "rate_limited")).toMatchObject({ max: 1, perMs: 3_600_000, starts: 1 });

      const backoff = await explain(retried.id);
      expect(backoff).toMatchObject({ status: "queued", verdict: "scheduled" });
      expect(codes(backoff)).toEqual(["retry_backoff"]);
      expect(evidence(backoff, "retry_backoff")).toMatchObject({
        attempt: 2,
        maxAttempts: 3,
        lastError: expect.stringContaining("the test asked for a retry"),
      });

      const done = await explain(finished.id);
      expect(done).toMatchObject({ status: "done", verdict: "done" });
      expect(codes(done)).toEqual(["done"]);

      const human = await cli("jobs", "explain", sameGroup.id);
      expect(human.stdout.split("\n")[0]).toBe(`${sameGroup.id}: blocked (status queued)`);
      expect(codeLines(human)).toEqual(["queue_concurrency_full", "group_concurrency_full"]);
    } finally {
      writeFileSync(release, "");
      worker.child.kill("SIGTERM");
    }
    const exited = await worker.exited;
    expect(exited.code, exited.stderr).toBe(0);
  });

  it("explain/help: --help names every code core produces, the JSON shape and examples", async () => {
    const r = await cli("jobs", "explain", "--help");
    expect(r.code).toBe(0);
    for (const code of EXPLAIN_CODES.filter((c) => c !== "not_found")) expect(r.stdout).toContain(code);
    expect(r.stdout).toContain("{ status, verdict, reasons: [{ code, message, evidence }] }");
    expect(r.stdout).toMatch(/Examples:\n {2}soniq jobs explain /);
    expect(r.stdout).not.toMatch(/later @soniq\/core|not available/);
  });
});
