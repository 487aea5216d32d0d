/**
 * The "limit" row: the least a Postgres queue can do, hand-written on `pg` alone, to show how close the
 * real systems come to what this database allows. One table, one partial index that matches the fetch,
 * claim 500 rows in one UPDATE (`id = ANY(ARRAY(SELECT ... FOR UPDATE SKIP LOCKED))`, which keeps the index
 * path; `id IN (SELECT ...)` turns into a full scan once the table has statistics), completions batched by
 * id array, LISTEN/NOTIFY wake-ups, named (prepared) statements. Done rows are kept (status 'done'), as
 * Soniq keeps them for the result TTL by default. No heartbeats, retries with backoff, or recovery.
 */
import type pg from "pg";
import { recordIncident } from "../incidents.js";
import { benchClient, benchPool, harnessPool } from "../pg-admin.js";
import {
  type BenchWorker,
  type Counts,
  handle,
  kindOfTask,
  RETRY_ATTEMPTS,
  readIndex,
  type SystemAdapter,
  type SystemSession,
  type SystemTarget,
  TASK_NAMES,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

const CHANNEL = "limit_jobs";
const CLAIM_SIZE = 500;
const POLL_MS = 1000;

const SCHEMA = `
CREATE TABLE limit_jobs (
  id bigserial PRIMARY KEY,
  task text NOT NULL,
  payload jsonb NOT NULL,
  status text NOT NULL DEFAULT 'queued',
  attempts int NOT NULL DEFAULT 0,
  max_attempts int NOT NULL DEFAULT 3,
  run_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX limit_jobs_fetch ON limit_jobs (run_at, id) WHERE status = 'queued';
`;

const INSERT_ONE = `WITH ins AS (INSERT INTO limit_jobs (task, payload, max_attempts) VALUES ($1, $2, $3) RETURNING 1)
SELECT pg_notify('${CHANNEL}', count(*)::text) FROM ins`;
const INSERT_MANY = `WITH ins AS (
  INSERT INTO limit_jobs (task, payload, max_attempts)
  SELECT $1, p, $3 FROM unnest($2::jsonb[]) AS p RETURNING 1)
SELECT pg_notify('${CHANNEL}', count(*)::text) FROM ins`;
const CLAIM = `UPDATE limit_jobs SET status = 'processing', attempts = attempts + 1, updated_at = now()
WHERE id = ANY(ARRAY(
  SELECT id FROM limit_jobs WHERE status = 'queued' AND run_at <= now()
  ORDER BY run_at, id LIMIT $1 FOR UPDATE SKIP LOCKED))
RETURNING id, task, payload`;
const COMPLETE = `UPDATE limit_jobs SET status = 'done', updated_at = now()
WHERE id = ANY($1::bigint[]) AND status = 'processing'`;
const FAIL = `UPDATE limit_jobs j SET
  status = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'queued' END,
  last_error = f.err, run_at = now(), updated_at = now()
FROM unnest($1::bigint[], $2::text[]) AS f(id, err)
WHERE j.id = f.id AND j.status = 'processing'`;
const RELEASE = `UPDATE limit_jobs SET status = 'queued', attempts = attempts - 1
WHERE id = ANY($1::bigint[]) AND status = 'processing'`;
const COUNTS = `SELECT
  count(*) FILTER (WHERE status IN ('queued', 'processing'))::int AS pending,
  count(*) FILTER (WHERE status = 'done')::int AS done,
  count(*) FILTER (WHERE status = 'failed')::int AS failed,
  count(DISTINCT payload->>'i')::int AS distinct
FROM limit_jobs WHERE task = $1`;
const SETTLED = `SELECT NOT EXISTS (
  SELECT 1 FROM limit_jobs WHERE task = $1 AND status IN ('queued', 'processing')) AS settled`;

/** Max attempts: 1 for `fail` jobs, `RETRY_ATTEMPTS` for `retry` jobs (FAIL requeues them at once), else 3. */
function maxAttempts(kind: TaskKind): number {
  return kind === "fail" ? 1 : kind === "retry" ? RETRY_ATTEMPTS : 3;
}

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("the limit system needs a Postgres database");
  return target.databaseUrl;
}

interface ClaimedRow {
  id: string;
  task: string;
  payload: unknown;
}

/** Claims in batches into a local buffer, runs up to `concurrency` handlers, flushes results by id array. */
class LimitWorker implements BenchWorker {
  private readonly pool: pg.Pool;
  private listener: pg.Client | null = null;
  private buffer: ClaimedRow[] = [];
  private running = 0;
  private fetching = false;
  private wanted = false;
  /** The last claim came back short: the queue is empty until a wake-up or the poll says otherwise. */
  private drained = false;
  private stopping = false;
  private done: string[] = [];
  private failed: { id: string; err: string }[] = [];
  private flushing: Promise<void> | null = null;
  private poll: NodeJS.Timeout | null = null;
  private idle: (() => void) | null = null;

  constructor(
    private readonly url: string,
    private readonly spec: WorkerSpec,
  ) {
    this.pool = benchPool(url, 4, "limit worker pool");
  }

  async start(): Promise<void> {
    const listener = benchClient(this.url, "limit LISTEN connection");
    await listener.connect();
    listener.on("notification", () => this.wake());
    await listener.query(`LISTEN ${CHANNEL}`);
    this.listener = listener;
    this.poll = setInterval(() => this.wake(), POLL_MS);
    this.poll.unref();
    this.wake();
  }

  /** A wake-up (NOTIFY, poll, start): new jobs may exist, even if a claim running now missed them. */
  private wake(): void {
    this.drained = false;
    if (this.fetching) this.wanted = true;
    else this.fetch();
  }

  private fetch(): void {
    if (this.stopping || this.fetching || this.drained) return;
    if (this.buffer.length > this.spec.concurrency) return;
    this.fetching = true;
    this.wanted = false;
    this.pool
      .query<ClaimedRow>({ name: "limit_claim", text: CLAIM, values: [CLAIM_SIZE] })
      .then((res) => {
        this.fetching = false;
        this.drained = res.rows.length < CLAIM_SIZE && !this.wanted;
        for (const row of res.rows) this.buffer.push(row);
        this.pump();
        this.fetch();
      })
      .catch((err: unknown) => {
        this.fetching = false;
        recordIncident("limit claim", err);
      });
  }

  private pump(): void {
    while (!this.stopping && this.running < this.spec.concurrency && this.buffer.length > 0) {
      const row = this.buffer.shift() as ClaimedRow;
      this.running++;
      void this.run(row);
    }
    if (this.buffer.length <= this.spec.concurrency) this.fetch();
  }

  private async run(row: ClaimedRow): Promise<void> {
    const kind = kindOfTask(row.task);
    const i = readIndex(row.payload);
    try {
      await handle(this.spec, kind, i);
      this.done.push(row.id);
    } catch (err) {
      this.failed.push({ id: row.id, err: err instanceof Error ? err.message : String(err) });
    }
    this.running--;
    this.scheduleFlush();
    this.pump();
    if (this.running === 0 && this.idle) this.idle();
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = this.flush()
      .catch((err: unknown) => recordIncident("limit flush", err))
      .finally(() => {
        this.flushing = null;
        if (this.done.length > 0 || this.failed.length > 0) this.scheduleFlush();
      });
  }

  private async flush(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const done = this.done;
    const failed = this.failed;
    this.done = [];
    this.failed = [];
    if (done.length > 0) await this.pool.query({ name: "limit_complete", text: COMPLETE, values: [done] });
    if (failed.length > 0) {
      const values = [failed.map((f) => f.id), failed.map((f) => f.err)];
      await this.pool.query({ name: "limit_fail", text: FAIL, values });
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.poll) clearInterval(this.poll);
    if (this.running > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    while (this.flushing) await this.flushing;
    const unstarted = this.buffer.map((r) => r.id);
    this.buffer = [];
    if (unstarted.length > 0) await this.pool.query(RELEASE, [unstarted]);
    await this.listener?.end();
    await this.pool.end();
  }
}

class LimitSession implements SystemSession {
  private readonly pool: pg.Pool;
  /** The harness's counts and `settled` poll, apart from the producer's connections (pg-admin.ts). */
  private readonly countsPool: pg.Pool;

  constructor(private readonly url: string) {
    this.pool = benchPool(url, 2, "limit producer pool");
    this.countsPool = harnessPool(url, "limit counts pool");
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    const values = [TASK_NAMES[kind], { i }, maxAttempts(kind)];
    await this.pool.query({ name: "limit_insert_one", text: INSERT_ONE, values });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    const payloads = Array.from({ length: count }, (_, k) => JSON.stringify({ i: from + k }));
    const values = [TASK_NAMES[kind], payloads, maxAttempts(kind)];
    await this.pool.query({ name: "limit_insert_many", text: INSERT_MANY, values });
  }

  async counts(kind: TaskKind): Promise<Counts> {
    const res = await this.countsPool.query<Counts>(COUNTS, [TASK_NAMES[kind]]);
    const row = res.rows[0];
    if (!row) throw new Error("limit counts returned no row");
    return row;
  }

  async settled(kind: TaskKind): Promise<boolean> {
    return (
      (await this.countsPool.query<{ settled: boolean }>(SETTLED, [TASK_NAMES[kind]])).rows[0]?.settled ===
      true
    );
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new LimitWorker(this.url, spec);
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.countsPool.end()]);
  }
}

export const limitSystem: SystemAdapter = {
  id: "limit",
  label: "limit (hand-written SQL on pg)",
  storage: "postgres",
  immediateRetries: true,
  inProcess: false,
  notes: "claim 500 per UPDATE with SKIP LOCKED, batched completion by id array, LISTEN, named statements",
  async prepare(target) {
    const client = benchClient(requireUrl(target), "limit schema setup");
    await client.connect();
    try {
      await client.query(SCHEMA);
    } finally {
      await client.end();
    }
  },
  async open(target) {
    return new LimitSession(requireUrl(target));
  },
};
