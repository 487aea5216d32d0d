/**
 * Sidequest 1.16.4 on PostgreSQL (`@sidequest/postgres-backend`), Node >= 22: every process on Node 24. Its
 * fast settings: the engine in the worker's own process (`fork: false`) running jobs inline (`runner:
 * "inline"`, no worker-thread pool), `maxConcurrentJobs` and the queue's concurrency at c, the default
 * polling interval (100 ms; Sidequest has no wake-up between processes), no dashboard. Sidequest has no bulk
 * enqueue: a "batch" is that many `enqueue()` calls in flight at once on its connection pool. Finished jobs
 * stay in `sidequest_jobs` (state `completed` or `failed`). Sidequest on SQLite is not run: its
 * `@sidequest/sqlite-backend` (1.16.5 only) depends on `@sidequest/core` 1.16.5, which is not published.
 */
import type pg from "pg";
import { node24Unavailable } from "../node24.js";
import { harnessPool } from "../pg-admin.js";
import type { setSidequestSpec } from "./sidequest-jobs.js";
import {
  type BenchWorker,
  type Counts,
  type QueueTaskKind,
  queueKind,
  RETRY_ATTEMPTS,
  type SystemAdapter,
  type SystemSession,
  type SystemTarget,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

const QUEUE = "bench";

/** The part of Sidequest's static API used here (loaded on Node 24 only). */
interface JobBuilder {
  queue(name: string): JobBuilder;
  maxAttempts(n: number): JobBuilder;
  retryDelay(ms: number): JobBuilder;
  enqueue(i: number): Promise<unknown>;
}
interface SidequestApi {
  configure(config: Record<string, unknown>): Promise<unknown>;
  start(config: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
  build(jobClass: unknown): JobBuilder;
}
interface Loaded {
  Sidequest: SidequestApi;
  jobs: Record<QueueTaskKind, unknown>;
  setSpec: typeof setSidequestSpec;
}

const SIDEQUEST: string = "sidequest";
let loading: Promise<Loaded> | null = null;
function load(): Promise<Loaded> {
  loading ??= Promise.all([
    import(SIDEQUEST) as Promise<{ Sidequest: SidequestApi }>,
    import("./sidequest-jobs.js"),
  ]).then(([{ Sidequest }, jobs]) => ({
    Sidequest,
    jobs: { noop: jobs.BenchNoopJob, fail: jobs.BenchFailJob, retry: jobs.BenchRetryJob },
    setSpec: jobs.setSidequestSpec,
  }));
  return loading;
}

const CLASSES: Record<QueueTaskKind, string> = {
  noop: "BenchNoopJob",
  fail: "BenchFailJob",
  retry: "BenchRetryJob",
};

const COUNTS = `SELECT
  count(*) FILTER (WHERE state IN ('waiting', 'claimed', 'running'))::int AS pending,
  count(*) FILTER (WHERE state = 'completed')::int AS done,
  count(*) FILTER (WHERE state = 'failed')::int AS failed,
  count(DISTINCT args->>0)::int AS distinct
FROM sidequest_jobs WHERE class = $1`;

const SETTLED = `SELECT NOT EXISTS (
  SELECT 1 FROM sidequest_jobs WHERE class = $1 AND state IN ('waiting', 'claimed', 'running')) AS settled`;

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("Sidequest on Postgres needs a Postgres database");
  return target.databaseUrl;
}

function config(url: string, concurrency: number): Record<string, unknown> {
  return {
    backend: { driver: "@sidequest/postgres-backend", config: url },
    queues: [{ name: QUEUE, concurrency }],
    maxConcurrentJobs: concurrency,
    fork: false,
    runner: "inline",
    gracefulShutdown: false,
    // Quiet: Sidequest logs every failed job with its stack at level "error" (W4 would print thousands).
    logger: { level: "silent" },
    dashboard: { enabled: false },
  };
}

class SidequestWorker implements BenchWorker {
  constructor(
    private readonly url: string,
    private readonly spec: WorkerSpec,
  ) {}

  async start(): Promise<void> {
    const { Sidequest, setSpec } = await load();
    setSpec(this.spec);
    await Sidequest.start({ ...config(this.url, this.spec.concurrency), skipMigration: true });
  }

  async stop(): Promise<void> {
    const { Sidequest, setSpec } = await load();
    await Sidequest.stop();
    setSpec(null);
  }
}

/**
 * Configures Sidequest for enqueueing on first use: the worker host opens a session too, and a Sidequest
 * already configured there would keep that configuration when its worker starts (one engine per process).
 */
class SidequestSession implements SystemSession {
  private readonly pool: pg.Pool;
  private configured: Promise<unknown> | null = null;

  constructor(
    private readonly url: string,
    private readonly api: Loaded,
  ) {
    this.pool = harnessPool(url, "sidequest counts pool");
  }

  private async builder(kind: TaskKind): Promise<JobBuilder> {
    this.configured ??= this.api.Sidequest.configure({ ...config(this.url, 1), skipMigration: true });
    await this.configured;
    const b = this.api.Sidequest.build(this.api.jobs[queueKind(kind)]).queue(QUEUE);
    if (kind === "retry") return b.maxAttempts(RETRY_ATTEMPTS).retryDelay(0);
    return b.maxAttempts(1);
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await (await this.builder(kind)).enqueue(i);
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    const builders = await Promise.all(Array.from({ length: count }, () => this.builder(kind)));
    await Promise.all(builders.map((b, k) => b.enqueue(from + k)));
  }

  async counts(kind: TaskKind): Promise<Counts> {
    const row = (await this.pool.query<Counts>(COUNTS, [CLASSES[queueKind(kind)]])).rows[0];
    if (!row) throw new Error("sidequest counts returned no row");
    return row;
  }

  async settled(kind: TaskKind): Promise<boolean> {
    const res = await this.pool.query<{ settled: boolean }>(SETTLED, [CLASSES[queueKind(kind)]]);
    return res.rows[0]?.settled === true;
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new SidequestWorker(this.url, spec);
  }

  async close(): Promise<void> {
    if (this.configured) await this.api.Sidequest.stop();
    await this.pool.end();
  }
}

export const sidequestPostgresSystem: SystemAdapter = {
  id: "sidequest-postgres",
  label: "Sidequest 1.16.4 postgres (Node 24)",
  storage: "postgres",
  inProcess: false,
  notInQuick: true,
  runtime: "node24",
  immediateRetries: true,
  // About 100-150 jobs/s at c10 here (a full set of slots makes its dispatcher sleep out the 100 ms poll):
  // a tenth of N keeps the bench in its time budget; the rates are still jobs/s.
  drainScale: 0.1,
  notes:
    "fork: false, runner: inline, maxConcurrentJobs and queue concurrency c, default 100 ms polling (no cross-process wake-up); drains a tenth of N (W1 2,000, W4 2,000); no bulk API (a batch is concurrent enqueue() calls); on Node 24 (it needs Node >= 22)",
  unavailable: async () => node24Unavailable(),
  preload: load,
  async prepare(target) {
    const { Sidequest } = await load();
    await Sidequest.configure(config(requireUrl(target), 1));
    await Sidequest.stop();
  },
  async open(target) {
    const url = requireUrl(target);
    return new SidequestSession(url, await load());
  },
};
