/**
 * liteque 0.8.0 on SQLite (WAL, its default), producer and worker in one process like Soniq's SQLite row.
 * One `SqliteQueue` per task kind and one `Runner` each at the measured concurrency, polling every 10 ms
 * when idle (it has no wake-up; its README's example polls every 1,000 ms). It deletes a job when it
 * completes (a drained queue is an empty table) and keeps failed ones (`keepFailedJobs`). No bulk enqueue:
 * a batch is that many `enqueue()` calls.
 *
 * liteque 0.8.0 dequeues in `db.transaction(async (txn) => ...)`, which better-sqlite3 refuses from 11.10 on
 * ("Transaction function cannot return a promise"): it is loaded through `@soniq/bench-liteque`
 * (bench/peers/liteque), which gives it better-sqlite3 11.9.1, inside its peer range, where the call is accepted
 * (its select and update then run as autocommit statements, kept safe by its compare-and-swap on allocationId).
 * `unavailable()` still probes a dequeue on an in-memory database first, so a broken install is reported as not
 * run, with the reason, instead of timing out.
 */
import type { Runner, SqliteQueue } from "@soniq/bench-liteque";
import { ensureLitequeAddon } from "./liteque-build.js";
import { SqliteCounts } from "./sqlite-counts.js";
import {
  type BenchWorker,
  handle,
  type QueueTaskKind,
  queueKind,
  RETRY_ATTEMPTS,
  readIndex,
  type SystemAdapter,
  type SystemSession,
  type SystemTarget,
  TASK_NAMES,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

const POLL_MS = 10;
const KINDS = ["noop", "fail", "retry"] as const;

const COUNTS = `SELECT
  count(*) FILTER (WHERE status IN ('pending', 'running', 'pending_retry')) AS pending,
  NULL AS done,
  count(*) FILTER (WHERE status = 'failed') AS failed,
  count(DISTINCT json_extract(payload, '$.i')) AS "distinct"
FROM tasks WHERE queue = ?`;
const BUSY = `SELECT EXISTS (SELECT 1 FROM tasks WHERE queue = ? AND status IN ('pending', 'running', 'pending_retry')) AS busy`;

function requirePath(target: SystemTarget): string {
  if (!target.sqlitePath) throw new Error("liteque needs a file");
  return target.sqlitePath;
}

/** Retries after the first run: none for failing jobs, two (three runs) for w4-retry. */
function numRetries(kind: TaskKind): number {
  return kind === "retry" ? RETRY_ATTEMPTS - 1 : 0;
}

type Payload = { i: number };

/** drizzle 0.33 keeps the better-sqlite3 connection on its session. */
function closeDb(db: unknown): void {
  (db as { session: { client: { close(): void } } }).session.client.close();
}

class LitequeWorker implements BenchWorker {
  private runners: Runner<Payload>[] = [];
  private running: Promise<void>[] = [];

  constructor(
    private readonly queues: Record<QueueTaskKind, SqliteQueue<Payload>>,
    private readonly spec: WorkerSpec,
  ) {}

  async start(): Promise<void> {
    const { Runner } = await import("@soniq/bench-liteque");
    const spec = this.spec;
    for (const kind of KINDS) {
      const runner = new Runner<Payload>(
        this.queues[kind],
        { run: (job) => handle(spec, kind, readIndex(job.data)) },
        { concurrency: spec.concurrency, pollIntervalMs: POLL_MS, timeoutSecs: 60 },
      );
      this.runners.push(runner);
      this.running.push(runner.run());
    }
  }

  async stop(): Promise<void> {
    for (const r of this.runners) r.stop();
    await Promise.all(this.running);
    this.runners = [];
    this.running = [];
  }
}

class LitequeSession implements SystemSession {
  constructor(
    private readonly queues: Record<QueueTaskKind, SqliteQueue<Payload>>,
    private readonly reads: SqliteCounts,
  ) {}

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.queues[queueKind(kind)].enqueue({ i }, { numRetries: numRetries(kind) });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    for (let k = 0; k < count; k++) await this.enqueueOne(kind, from + k);
  }

  async counts(kind: TaskKind) {
    return this.reads.counts(kind);
  }

  async settled(kind: TaskKind) {
    return this.reads.settled(kind);
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new LitequeWorker(this.queues, spec);
  }

  async close(): Promise<void> {
    this.reads.close();
  }
}

export const litequeSystem: SystemAdapter = {
  id: "liteque",
  label: "liteque 0.8.0 sqlite (in-process)",
  storage: "sqlite",
  inProcess: true,
  deletesDone: true,
  immediateRetries: true,
  // 200-500 jobs/s here (one job per dequeue, each a select and an update): 20,000 jobs at c50 passed the
  // 120 s drain deadline on a slow host. A tenth of N keeps it in the time budget; the rates are still jobs/s.
  drainScale: 0.1,
  notes: `one Runner per queue at concurrency c, pollIntervalMs ${POLL_MS} (no wake-up); drains a tenth of N (W1 2,000, W4 2,000); completed jobs deleted, failed kept; no bulk API (a batch is enqueue() calls)`,
  preload: () => import("@soniq/bench-liteque"),
  async unavailable() {
    const notBuilt = ensureLitequeAddon();
    if (notBuilt !== null) return notBuilt;
    const { buildDBClient, SqliteQueue } = await import("@soniq/bench-liteque");
    const db = buildDBClient(":memory:", { runMigrations: true });
    try {
      const queue = new SqliteQueue<Payload>("probe", db, {
        defaultJobArgs: { numRetries: 0 },
        keepFailedJobs: true,
      });
      await queue.enqueue({ i: 0 });
      await queue.attemptDequeue({ timeoutSecs: 5 });
      closeDb(db);
      return null;
    } catch (err) {
      // Left open: the async transaction body better-sqlite3 refused still runs its queries afterwards.
      return `liteque cannot dequeue on this Node and better-sqlite3: ${err instanceof Error ? err.message : String(err)}`;
    }
  },
  async prepare(target) {
    const { buildDBClient } = await import("@soniq/bench-liteque");
    closeDb(buildDBClient(requirePath(target), { runMigrations: true }));
  },
  async open(target) {
    const path = requirePath(target);
    const { buildDBClient, SqliteQueue } = await import("@soniq/bench-liteque");
    const db = buildDBClient(path);
    const open = (kind: QueueTaskKind) =>
      new SqliteQueue<Payload>(TASK_NAMES[kind], db, {
        defaultJobArgs: { numRetries: 0 },
        keepFailedJobs: true,
      });
    const queues = { noop: open("noop"), fail: open("fail"), retry: open("retry") };
    return new LitequeSession(queues, new SqliteCounts(path, COUNTS, BUSY));
  },
};
