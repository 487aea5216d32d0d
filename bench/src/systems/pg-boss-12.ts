/**
 * pg-boss 12.38.0, its current major (Node >= 22: every process on Node 24). Its fast settings as documented
 * for throughput: LISTEN/NOTIFY wake-ups (`useListenNotify` and queues created with `notify`), batch fetches
 * with burst mode (`burstWhenBatchFull`: keep fetching while batches come back full), `localConcurrency` c
 * loops of `batchSize` 100, each job settled on its own (`perJobResults`). Completed jobs stay in
 * `pgboss.job` with state `completed`. Imported on first use (the harness on Node 20 never loads it).
 */
import type pg from "pg";
import { recordIncident } from "../incidents.js";
import { node24Unavailable } from "../node24.js";
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

/** The part of pg-boss 12's API used here (its own types are not loaded next to pg-boss 10's). */
interface Boss {
  on(event: "error", listener: (err: Error) => void): void;
  start(): Promise<unknown>;
  stop(options?: { graceful?: boolean; wait?: boolean; timeout?: number }): Promise<void>;
  createQueue(name: string, options?: { notify?: boolean; retryLimit?: number }): Promise<void>;
  send(name: string, data: object, options?: { retryLimit?: number }): Promise<string | null>;
  insert(name: string, jobs: { data: object; retryLimit?: number }[]): Promise<unknown>;
  work(
    name: string,
    options: Record<string, unknown>,
    handler: (jobs: { id: string; data: unknown }[]) => Promise<{ id: string; status: string }[]>,
  ): Promise<string>;
}
type BossClass = new (options: Record<string, unknown>) => Boss;

const PG_BOSS_12: string = "pg-boss-12";
let loading: Promise<BossClass> | null = null;
function load(): Promise<BossClass> {
  loading ??= import(PG_BOSS_12).then((m: { PgBoss: BossClass }) => m.PgBoss);
  return loading;
}

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

/** Workers run its maintenance; producers and setup skip it. */
async function newBoss(url: string, role: "worker" | "producer"): Promise<Boss> {
  const PgBoss = await load();
  const options = role === "worker" ? { useListenNotify: true } : { supervise: false, schedule: false };
  // Keep node-postgres's default session name (PGAPPNAME), as every other system's sessions do.
  const appName = process.env.PGAPPNAME ? { application_name: process.env.PGAPPNAME } : {};
  const boss = new PgBoss({ connectionString: url, ...appName, ...options });
  boss.on("error", (err) => recordIncident(`pg-boss 12 ${role}`, err));
  return boss;
}

class PgBoss12Worker implements BenchWorker {
  private boss: Boss | null = null;

  constructor(
    private readonly url: string,
    private readonly spec: WorkerSpec,
  ) {}

  async start(): Promise<void> {
    const boss = await newBoss(this.url, "worker");
    await boss.start();
    this.boss = boss;
    const spec = this.spec;
    for (const kind of ["noop", "fail"] as const) {
      await boss.work(
        TASK_NAMES[kind],
        {
          batchSize: BATCH_SIZE,
          localConcurrency: spec.concurrency,
          pollingIntervalSeconds: POLL_SECONDS,
          burstWhenBatchFull: true,
          perJobResults: true,
        },
        async (jobs) => {
          const results = await Promise.allSettled(
            jobs.map((job) => handle(spec, kind, readIndex(job.data))),
          );
          return jobs.map((job, k) => ({
            id: job.id,
            status: results[k]?.status === "fulfilled" ? "completed" : "failed",
          }));
        },
      );
    }
  }

  async stop(): Promise<void> {
    await this.boss?.stop({ graceful: true, wait: true, timeout: 10_000 });
    this.boss = null;
  }
}

class PgBoss12Session implements SystemSession {
  private readonly pool: pg.Pool;

  constructor(
    private readonly url: string,
    private readonly boss: Boss,
  ) {
    this.pool = harnessPool(url, "pg-boss 12 counts pool");
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.boss.send(TASK_NAMES[kind], { i }, { retryLimit: retryLimit(kind) });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    const jobs = Array.from({ length: count }, (_, k) => ({
      data: { i: from + k },
      retryLimit: retryLimit(kind),
    }));
    await this.boss.insert(TASK_NAMES[kind], jobs);
  }

  async counts(kind: TaskKind): Promise<Counts> {
    const row = (await this.pool.query<Counts>(COUNTS, [TASK_NAMES[kind]])).rows[0];
    if (!row) throw new Error("pg-boss 12 counts returned no row");
    return row;
  }

  async settled(kind: TaskKind): Promise<boolean> {
    const res = await this.pool.query<{ settled: boolean }>(SETTLED, [TASK_NAMES[kind]]);
    return res.rows[0]?.settled === true;
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new PgBoss12Worker(this.url, spec);
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true });
    await this.pool.end();
  }
}

export const pgBoss12System: SystemAdapter = {
  id: "pg-boss-12",
  label: "pg-boss 12.38.0 (Node 24)",
  storage: "postgres",
  inProcess: false,
  notInQuick: true,
  runtime: "node24",
  notes: `useListenNotify + queues with notify, localConcurrency c x batchSize ${BATCH_SIZE}, burstWhenBatchFull, perJobResults; on Node 24 (it needs Node >= 22)`,
  unavailable: async () => node24Unavailable(),
  preload: load,
  async prepare(target) {
    const boss = await newBoss(requireUrl(target), "producer");
    await boss.start();
    try {
      for (const name of Object.values(TASK_NAMES)) await boss.createQueue(name, { notify: true });
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
  },
  async open(target) {
    const url = requireUrl(target);
    const boss = await newBoss(url, "producer");
    await boss.start();
    return new PgBoss12Session(url, boss);
  },
};
