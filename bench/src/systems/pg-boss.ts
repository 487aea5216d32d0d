/**
 * pg-boss 10.4.2. Version 10 has no per-job concurrency setting: a `work()` loop fetches up to `batchSize`
 * jobs, runs the batch, completes (or fails) it as a whole, then waits out its polling interval even when
 * more jobs are queued, and nothing wakes it when a job is sent from another process. So a worker at
 * "concurrency c" here is c `work()` loops of `batchSize` 100 polling every 0.5 s (the smallest interval
 * pg-boss accepts). Completed jobs stay in `pgboss.job` with state `completed`.
 */

import type pg from "pg";
import PgBoss from "pg-boss";
import { recordIncident } from "../incidents.js";
import { harnessPool } from "../pg-admin.js";
import {
  type BenchWorker,
  type Counts,
  handle,
  readIndex,
  type SystemAdapter,
  type SystemSession,
  type SystemTarget,
  TASK_NAMES,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

const BATCH_SIZE = 100;
const POLL_SECONDS = 0.5;

const COUNTS = `SELECT
  count(*) FILTER (WHERE state IN ('created', 'retry', 'active'))::int AS pending,
  count(*) FILTER (WHERE state = 'completed')::int AS done,
  count(*) FILTER (WHERE state = 'failed')::int AS failed,
  count(DISTINCT data->>'i')::int AS distinct
FROM pgboss.job WHERE name = $1`;

const SETTLED = `SELECT NOT EXISTS (
  SELECT 1 FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry', 'active')) AS settled`;

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("pg-boss needs a Postgres database");
  return target.databaseUrl;
}

/** Max attempts 1 for failing jobs: no retries. */
function retryLimit(kind: TaskKind): number {
  return kind === "fail" ? 0 : 2;
}

/** Workers run with pg-boss's defaults; producers and setup skip its maintenance and cron loops. */
function newBoss(url: string, role: "worker" | "producer"): PgBoss {
  const options = role === "worker" ? {} : { supervise: false, schedule: false };
  // pg-boss names its sessions "pgboss" unless told; keep node-postgres's default (PGAPPNAME), as every other
  // system's sessions do, so one run's sessions can be told apart (test/pg-termination.test.ts).
  const appName = process.env.PGAPPNAME ? { application_name: process.env.PGAPPNAME } : {};
  const boss = new PgBoss({ connectionString: url, ...appName, ...options });
  // pg-boss re-emits its pool's errors (and its loops' failures) here.
  boss.on("error", (err) => recordIncident(`pg-boss ${role}`, err));
  return boss;
}

class PgBossWorker implements BenchWorker {
  private boss: PgBoss | null = null;

  constructor(
    private readonly url: string,
    private readonly spec: WorkerSpec,
  ) {}

  async start(): Promise<void> {
    const boss = newBoss(this.url, "worker");
    await boss.start();
    this.boss = boss;
    const spec = this.spec;
    for (const kind of ["noop", "fail"] as const) {
      for (let loop = 0; loop < spec.concurrency; loop++) {
        await boss.work<unknown>(
          TASK_NAMES[kind],
          { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLL_SECONDS },
          async (jobs) => {
            const results = await Promise.allSettled(
              jobs.map((job) => handle(spec, kind, readIndex(job.data))),
            );
            const failure = results.find((r) => r.status === "rejected");
            if (failure) throw failure.reason;
          },
        );
      }
    }
  }

  async stop(): Promise<void> {
    await this.boss?.stop({ graceful: true, wait: true, timeout: 10_000 });
    this.boss = null;
  }
}

class PgBossSession implements SystemSession {
  private readonly pool: pg.Pool;

  constructor(
    private readonly url: string,
    private readonly boss: PgBoss,
  ) {
    this.pool = harnessPool(url, "pg-boss counts pool");
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.boss.send(TASK_NAMES[kind], { i }, { retryLimit: retryLimit(kind) });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    const jobs = Array.from({ length: count }, (_, k) => ({
      name: TASK_NAMES[kind],
      data: { i: from + k },
      retryLimit: retryLimit(kind),
    }));
    await this.boss.insert(jobs);
  }

  async counts(kind: TaskKind): Promise<Counts> {
    const row = (await this.pool.query<Counts>(COUNTS, [TASK_NAMES[kind]])).rows[0];
    if (!row) throw new Error("pg-boss counts returned no row");
    return row;
  }

  async settled(kind: TaskKind): Promise<boolean> {
    return (
      (await this.pool.query<{ settled: boolean }>(SETTLED, [TASK_NAMES[kind]])).rows[0]?.settled === true
    );
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new PgBossWorker(this.url, spec);
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true });
    await this.pool.end();
  }
}

export const pgBossSystem: SystemAdapter = {
  id: "pg-boss",
  label: "pg-boss 10.4.2",
  storage: "postgres",
  inProcess: false,
  // Optional: pg-boss 12 (its current major, on Node 24) is the default pg-boss row.
  optional: true,
  notes: `c work() loops x batchSize ${BATCH_SIZE}, pollingIntervalSeconds ${POLL_SECONDS} (its minimum); no cross-process wake-up`,
  async prepare(target) {
    const boss = newBoss(requireUrl(target), "producer");
    await boss.start();
    try {
      for (const name of Object.values(TASK_NAMES)) await boss.createQueue(name);
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
  },
  async open(target) {
    const url = requireUrl(target);
    const boss = newBoss(url, "producer");
    await boss.start();
    return new PgBossSession(url, boss);
  },
};
