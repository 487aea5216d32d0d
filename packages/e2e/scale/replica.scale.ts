/**
 * A read replica and a failover (issue 24, DESIGN.md section 17), on private clusters only: a primary and a
 * streaming replica of it, started by the test.
 * - scale/replica-reads: `readConnectionString` sends the operator's reads to the replica (held 6 s behind
 *   by recovery_min_apply_delay, so a job just enqueued is listed only later, while jobs.get on the primary
 *   sees it at once) and `soniq.replication.status()` shows the lag, as does `soniq status` (SONIQ_READ_DATABASE_URL).
 * - scale/failover-{synchronous,asynchronous}: worker processes drain through a private PgBouncer; mid-drain
 *   the primary is stopped (immediate), the replica promoted and PgBouncer re-pointed (RELOAD): the workers
 *   reconnect and finish. Synchronous replication: no job runs again after its done was committed.
 *   Asynchronous: such reruns are counted. Downtime is measured and printed (SCALE FIGURE lines).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBackend } from "@soniq/backend-postgres";
import { type ReplicationStatus, Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The CLI's entry point, run in process (it is not a dependency of this private package).
import { run } from "../../cli/src/index.js";
import { type Child, eventually, kill, readRunLog, spawnWorker, uniqueName } from "../faults/support.js";
import { type Cluster, sqlOn, startCluster } from "./cluster.js";
import { type PgBouncer, startPgBouncer } from "./pgbouncer.js";
import { figure, SHORT, size } from "./support.js";

let logDir = "";
beforeAll(() => {
  logDir = mkdtempSync(join(tmpdir(), "soniq-scale-"));
});
afterAll(() => rmSync(logDir, { recursive: true, force: true }));

/** `soniq status --json` run in this process (the CLI's own entry), with a read replica from the environment. */
async function cliStatus(url: string, readUrl: string): Promise<{ replication: ReplicationStatus }> {
  let out = "";
  const sink = (write: (s: string) => void) => ({ write, isTTY: false }) as unknown as NodeJS.WriteStream;
  const io = {
    out: sink((chunk) => {
      out += chunk;
    }),
    err: sink(() => {}),
    env: { SONIQ_READ_DATABASE_URL: readUrl },
    now: Date.now,
  };
  expect(await run(["--database-url", url, "--json", "status"], io)).toBe(0);
  return JSON.parse(out);
}

/** The run log's lines (`start|done <id> <pid>`) of these jobs, in order, for a failure message. */
function linesOf(log: string, ids: readonly string[]): string {
  const wanted = new Set(ids);
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => wanted.has(line.split(" ")[1] ?? ""))
    .join("\n");
}

/** A primary and its streaming replica, both private; `soniq` created on the primary and migrated. */
async function pair(o: { synchronous?: boolean; applyDelayMs?: number }) {
  const primary = await startCluster({ synchronous: o.synchronous });
  let replica: Cluster | undefined;
  try {
    replica = await startCluster({ replicaOf: primary, applyDelayMs: o.applyDelayMs });
    await sqlOn(primary.url(), "CREATE DATABASE soniq");
    const setup = postgresBackend({ connectionString: primary.url("soniq") });
    await setup.migrations.apply();
    await setup.close();
    const standby = replica;
    // The replica has replayed the migrations (with a delay: a few seconds later).
    await eventually(async () => {
      const rows = await sqlOn<{ n: number }>(
        standby.url("soniq"),
        "SELECT count(*)::int AS n FROM soniq_jobs",
      );
      expect(rows[0]?.n).toBe(0);
    }, 30_000);
    return { primary, replica: standby };
  } catch (err) {
    replica?.remove();
    primary.remove();
    throw err;
  }
}

describe("scale/replica", () => {
  it("scale/replica-reads: lists and stats come from the replica, writes and jobs.get from the primary; the lag shows", async () => {
    const { primary, replica } = await pair({ applyDelayMs: 6000 });
    const soniq = new Soniq({
      backend: postgresBackend(
        { connectionString: primary.url("soniq") },
        { readConnectionString: replica.url("soniq") },
      ),
      allowUnknownJobNames: true,
    });
    try {
      const queue = uniqueName("replica");
      const { id } = await soniq.jobs.enqueue("replica.work", {}, { queue });
      // Written on the primary, read back there at once...
      expect((await soniq.jobs.get(id))?.id).toBe(id);
      // ...but the replica replays it 6 s later: the list and the stats do not have it yet, and the lag shows.
      expect((await soniq.jobs.list({ queue })).map((j) => j.id)).toEqual([]);
      expect((await soniq.jobs.stats({ queue })).queued).toBe(0);
      const behind = await soniq.replication.status();
      expect(behind.readReplica).toBe(true);
      expect(behind.lagMs).toBeGreaterThan(0);
      // `soniq status` with SONIQ_READ_DATABASE_URL reads there too and shows the lag.
      const status = await cliStatus(primary.url("soniq"), replica.url("soniq"));
      expect(status.replication.readReplica).toBe(true);
      expect(status.replication.lagMs).toBeGreaterThan(0);
      await eventually(
        async () => expect((await soniq.jobs.list({ queue })).map((j) => j.id)).toEqual([id]),
        30_000,
      );
      const caughtUp = await soniq.replication.status();
      figure({
        scenario: "read replica (apply delay 6 s)",
        "lag while behind": `${behind.lagMs} ms`,
        "lag caught up": `${caughtUp.lagMs} ms`,
      });
      expect(caughtUp).toEqual({ readReplica: true, lagMs: 0 });
    } finally {
      await soniq.close();
      replica.remove();
      primary.remove();
    }
  });

  // --short (CI) runs the synchronous failover only; the asynchronous one asserts nothing more, it counts.
  for (const synchronous of SHORT ? [true] : [true, false]) {
    const mode = synchronous ? "synchronous" : "asynchronous";
    it(`scale/failover-${mode}: primary stopped mid-drain, replica promoted, PgBouncer re-pointed; the workers finish`, async () => {
      const total = size(4000, 1500);
      const { primary, replica } = await pair({ synchronous });
      let bouncer: PgBouncer | undefined;
      const children: Child[] = [];
      let soniq: Soniq | undefined;
      try {
        bouncer = await startPgBouncer({ port: primary.port, databases: ["soniq"] });
        const url = bouncer.url("soniq");
        soniq = new Soniq({
          backend: postgresBackend({ connectionString: url }),
          allowUnknownJobNames: true,
        });
        const app = soniq;
        const queue = uniqueName("failover");
        for (let i = 0; i < total; i += 500) {
          const n = Math.min(500, total - i);
          await app.jobs.enqueueMany(
            Array.from({ length: n }, () => ({ job: "fault.work", args: {}, options: { queue } })),
          );
        }
        const log = join(logDir, `failover-${mode}.log`);
        // A long stale threshold: the outage must not make the workers look dead to each other.
        const env = { FAULT_JOB_MS: "5", FAULT_CONCURRENCY: "10", FAULT_STALE_MS: "60000" };
        for (let k = 0; k < 2; k++) children.push(spawnWorker("postgres", url, queue, log, "work", env));
        await Promise.all(children.map((c) => c.workerId));
        const done = async () => (await app.jobs.stats({ queue })).done;
        await eventually(async () => expect(await done()).toBeGreaterThanOrEqual(total * 0.4), 120_000);
        const stoppedAt = performance.now();
        const doneBefore = readRunLog(log).starts.size;
        primary.stop();
        replica.promote();
        await bouncer.repoint("127.0.0.1", replica.port);
        const switchedMs = performance.now() - stoppedAt;
        // Service is back when a job is done on the new primary (or every job is: on a short drain the workers
        // can finish the rest before the first count gets through).
        const first = await eventually(async () => done(), 60_000);
        await eventually(async () => {
          const now = await done();
          expect(now > first || now === total, `done ${now}, first read ${first}, total ${total}`).toBe(true);
        }, 60_000);
        const downtimeMs = performance.now() - stoppedAt;
        await eventually(async () => expect(await done()).toBe(total), 180_000);
        const runs = readRunLog(log);
        const lost = total - runs.starts.size;
        figure({
          scenario: `failover, ${mode} replication`,
          size: `${total} jobs, 2 processes x 10, stopped at ${doneBefore} started`,
          "promote + re-point": `${(switchedMs / 1000).toFixed(2)} s`,
          downtime: `${(downtimeMs / 1000).toFixed(2)} s`,
          "rerun after done": runs.rerunAfterDone.length,
          "run more than once": [...runs.starts.values()].filter((n) => n > 1).length,
          lost,
        });
        expect(lost).toBe(0);
        expect((await app.jobs.stats({ queue })).processing).toBe(0);
        if (synchronous) {
          expect(
            runs.rerunAfterDone,
            `run log lines of the jobs run again after their done:\n${linesOf(log, runs.rerunAfterDone)}`,
          ).toEqual([]);
        }
      } finally {
        await Promise.all(children.map(kill));
        await soniq?.close();
        await bouncer?.stop();
        replica.remove();
        primary.remove();
      }
    });
  }
});
