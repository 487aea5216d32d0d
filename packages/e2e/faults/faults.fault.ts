/**
 * The fault suite (`pnpm test:faults`, `--short` for CI): worker processes killed with SIGKILL mid-job,
 * database connections terminated during a drain and a dead-letter burst, four processes draining one
 * queue, the maintenance-lease holder killed. Each scenario prints its figures (FAULT FIGURE lines and a
 * table at the end). DESIGN.md section 13: nothing lost, nothing stuck, no job run again once done.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Backend, PermanentError, Soniq } from "@soniq/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pooledPostgresKind } from "../scale/pgbouncer.js";
import {
  type Child,
  eventually,
  expectSettled,
  figure,
  kill,
  postgresKind,
  printFigures,
  readRunLog,
  size,
  spawnWorker,
  sqliteKind,
  uniqueName,
} from "./support.js";

let logDir = "";
beforeAll(() => {
  logDir = mkdtempSync(join(tmpdir(), "soniq-faults-"));
});
afterAll(() => {
  printFigures();
  // FAULTS_KEEP_LOGS=1 keeps the run logs (start/done lines per job and process) for a post-mortem.
  if (process.env.FAULTS_KEEP_LOGS === "1") process.stdout.write(`run logs kept in ${logDir}\n`);
  else rmSync(logDir, { recursive: true, force: true });
});

async function enqueueAll(soniq: Soniq, queue: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 500) {
    const n = Math.min(500, count - i);
    const items = Array.from({ length: n }, (_, k) => ({
      job: "fault.work",
      args: { i: i + k },
      options: { queue },
    }));
    for (const r of await soniq.jobs.enqueueMany(items)) ids.push(r.id);
  }
  return ids;
}

// postgres-pgbouncer: the same scenarios through a private PgBouncer in transaction mode (issue 24).
describe.each([sqliteKind, postgresKind, pooledPostgresKind].map((make) => [make().name, make] as const))(
  "faults on %s",
  (name, make) => {
    const kind = make();
    const open: Soniq[] = [];
    const children: Child[] = [];
    beforeAll(() => kind.setup(), 60_000);
    afterAll(async () => {
      await Promise.all(children.splice(0).map(kill));
      await Promise.all(open.splice(0).map((s) => s.close()));
      await kind.teardown();
    }, 60_000);

    async function app(): Promise<Soniq> {
      // Every kill costs the jobs it held an attempt (claimed counts); enough attempts that none dead-letters.
      const soniq = new Soniq({
        backend: kind.create() as Backend<unknown>,
        allowUnknownJobNames: true,
        defaultMaxAttempts: 100,
      });
      open.push(soniq);
      await soniq.setup();
      return soniq;
    }

    it("faults/kill-9-mid-job: workers SIGKILLed mid-job; nothing lost, nothing run again after its done", async () => {
      const kills = size(20, 3);
      const total = size(200, 40);
      const t0 = performance.now();
      const soniq = await app();
      const queue = uniqueName("q");
      const log = join(logDir, `${name}-kill.log`);
      const ids = await enqueueAll(soniq, queue, total);
      const env = { FAULT_JOB_MS: "50", FAULT_CONCURRENCY: "3" };
      for (let k = 0; k < kills; k++) {
        const child = spawnWorker(name, kind.target(), queue, log, "work", env);
        children.push(child);
        await child.workerId;
        await eventually(() => expect(child.started.length).toBeGreaterThan(0), 30_000);
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 100)));
        await kill(child);
      }
      const finisher = spawnWorker(name, kind.target(), queue, log, "work", env);
      children.push(finisher);
      await eventually(() => expectSettled(soniq, queue, total), 120_000);
      await kill(finisher);
      const runs = readRunLog(log);
      const lost = ids.filter((id) => !runs.starts.has(id)).length;
      const stats = await soniq.jobs.stats({ queue });
      figure({
        scenario: `kill -9 mid-job x${kills}`,
        backend: name,
        size: `${total} jobs`,
        lost,
        "run more than once": [...runs.starts.values()].filter((n) => n > 1).length,
        "rerun after done": runs.rerunAfterDone.length,
        "left processing": stats.processing,
        time: `${((performance.now() - t0) / 1000).toFixed(1)} s`,
      });
      expect(lost).toBe(0);
      expect(stats.done).toBe(total);
      expect(runs.rerunAfterDone).toEqual([]);
      expect(runs.doneTwice).toEqual([]);
    });

    it("faults/lease-holder-killed: the maintenance-lease holder is SIGKILLed; its job is recovered within staleAfterMs plus one check", async () => {
      const soniq = await app();
      const queue = uniqueName("q");
      const log = join(logDir, `${name}-lease.log`);
      // A lease left by an earlier test's worker would expire by the new, short TTL; start from none. (This
      // runs before four-processes: the lease its killed workers leave lasts their 30 s staleAfterMs.)
      await eventually(async () => {
        expect(await soniq.backend.leases.tryAcquire("soniq.maintenance", "probe", 1)).toBe(true);
      }, 30_000);
      await soniq.backend.leases.release("soniq.maintenance", "probe");
      const holder = spawnWorker(name, kind.target(), queue, log, "hold", { FAULT_STALE_MS: "1000" });
      children.push(holder);
      const holderId = await holder.workerId;
      await eventually(async () => {
        expect(await soniq.backend.leases.tryAcquire("soniq.maintenance", "probe", 1)).toBe(false);
      });
      const { id } = await soniq.jobs.enqueue("fault.work", {}, { queue });
      await eventually(() => expect(holder.started).toContain(id), 30_000);
      await kill(holder);
      const killedAt = performance.now();
      soniq.job("fault.work", async () => "recovered", { queue });
      const worker = soniq.worker({
        queues: [queue],
        pollIntervalMs: 20,
        heartbeatIntervalMs: 100,
        staleAfterMs: 1000,
      });
      await worker.start();
      await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("done"), 30_000);
      const recoveryMs = performance.now() - killedAt;
      await worker.stop();
      figure({
        scenario: "maintenance-lease holder killed (staleAfterMs 1000)",
        backend: name,
        size: "1 job",
        lost: 0,
        "run more than once": "-",
        "rerun after done": 0,
        "left processing": 0,
        time: `recovered in ${(recoveryMs / 1000).toFixed(2)} s`,
      });
      expect((await soniq.backend.workers.list()).find((w) => w.id === holderId)?.status).toBe("stopped");
      // staleAfterMs (1 s) + one check (0.5 s) + a heartbeat and scheduling slack on a shared machine.
      expect(recoveryMs).toBeLessThan(4000);
    });

    it("faults/four-processes: 4 worker processes drain one queue; none run twice, none lost", async () => {
      const total = size(20_000, 2000);
      const t0 = performance.now();
      const soniq = await app();
      const queue = uniqueName("q");
      const log = join(logDir, `${name}-four.log`);
      const ids = await enqueueAll(soniq, queue, total);
      const env = { FAULT_JOB_MS: "0", FAULT_CONCURRENCY: "10", FAULT_STALE_MS: "30000" };
      const four = [1, 2, 3, 4].map(() => spawnWorker(name, kind.target(), queue, log, "work", env));
      children.push(...four);
      await Promise.all(four.map((c) => c.workerId));
      await eventually(() => expectSettled(soniq, queue, total), 300_000);
      await Promise.all(four.map(kill));
      const runs = readRunLog(log);
      const lost = ids.filter((id) => !runs.starts.has(id)).length;
      const twice = [...runs.starts.values()].filter((n) => n > 1).length;
      const stats = await soniq.jobs.stats({ queue });
      if (twice > 0 || lost > 0) {
        const pooler = kind.log?.().split("\n").slice(-40).join("\n") ?? "";
        console.log(
          `${name} four-processes: worker errors\n${runs.errors.slice(0, 20).join("\n")}\n${pooler}`,
        );
      }
      figure({
        scenario: `4 worker processes${runs.errors.length ? `; worker errors ${JSON.stringify(runs.errorsBy)}` : ""}`,
        backend: name,
        size: `${total} jobs`,
        lost,
        "run more than once": twice,
        "rerun after done": runs.rerunAfterDone.length,
        "left processing": stats.processing,
        time: `${((performance.now() - t0) / 1000).toFixed(1)} s`,
      });
      expect(lost).toBe(0);
      expect(twice).toBe(0);
      expect(stats.done).toBe(total);
    });

    // Terminating sessions is a Postgres fault (registered there only, so nothing is reported as skipped).
    if (name === "sqlite") return;
    it("faults/pg-terminated-during-drain: connections terminated 3 times during a drain and a dead-letter burst", async () => {
      const total = size(5000, 1000);
      const t0 = performance.now();
      const soniq = await app();
      const queue = uniqueName("q");
      soniq.job(
        "fault.work",
        async (args: { i: number }) => {
          if (args.i % 5 === 0) throw new PermanentError("to the dead-letter table");
          return args.i;
        },
        { queue },
      );
      const ids = await enqueueAll(soniq, queue, total);
      const worker = soniq.worker({
        queues: [queue],
        concurrency: 20,
        pollIntervalMs: 50,
        heartbeatIntervalMs: 200,
        staleAfterMs: 2000,
      });
      const felt: Record<string, number> = {};
      worker.on("error", ({ during }) => {
        felt[during] = (felt[during] ?? 0) + 1;
      });
      const dbName = new URL(kind.target()).pathname.slice(1);
      const admin = new pg.Client({ connectionString: kind.target().replace(`/${dbName}`, "/postgres") });
      await admin.connect();
      let terminated = 0;
      try {
        await worker.start();
        for (const share of [0.2, 0.5, 0.8]) {
          await eventually(async () => {
            const s = await soniq.jobs.stats({ queue });
            expect(s.done + s.dead_letter).toBeGreaterThanOrEqual(total * share);
          }, 120_000);
          const r = await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [dbName],
          );
          terminated += r.rowCount ?? 0;
        }
        await eventually(() => expectSettled(soniq, queue, total), 120_000);
      } finally {
        await admin.end();
        await worker.stop();
      }
      const check = new pg.Client({ connectionString: kind.target() });
      await check.connect();
      const both = await check.query(
        "SELECT count(*)::int AS n FROM soniq_jobs j JOIN soniq_dead_letter_jobs d ON d.id = j.id",
      );
      const jobs = await check.query(
        "SELECT (SELECT count(*)::int FROM soniq_jobs WHERE id = ANY($1)) + (SELECT count(*)::int FROM soniq_dead_letter_jobs WHERE id = ANY($1)) AS n",
        [ids],
      );
      await check.end();
      const stats = await soniq.jobs.stats({ queue });
      figure({
        scenario: `connections terminated x3 (${terminated} sessions) during drain + dead-letter burst; worker errors ${JSON.stringify(felt)}`,
        backend: name,
        size: `${total} jobs (${total / 5} dead-lettered)`,
        lost: total - (jobs.rows[0].n as number),
        "run more than once": "-",
        "rerun after done": "-",
        "left processing": stats.processing,
        time: `${((performance.now() - t0) / 1000).toFixed(1)} s`,
      });
      expect(both.rows[0].n).toBe(0);
      expect(jobs.rows[0].n).toBe(total);
      expect(stats.dead_letter).toBe(total / 5);
      expect(stats.done).toBe(total - total / 5);
    });
  },
);
