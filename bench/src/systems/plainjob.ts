/**
 * plainjob 0.0.14 on SQLite through better-sqlite3 (`better()`), producer and worker in one process like
 * Soniq's SQLite row. A plainjob worker runs one job at a time, so concurrency c is c `defineWorker` loops per
 * job type, polling every 10 ms when idle (`pollIntervall`; it has no wake-up, default 1,000 ms), with a
 * silent logger (its default, `console`, prints a debug line per job). WAL as its README's benchmark sets.
 * Done and failed jobs are kept (status 2 and 3). It has no retries: w4-retry does not apply.
 */
import type Database from "better-sqlite3";
import type { Queue } from "plainjob";
import { SqliteCounts } from "./sqlite-counts.js";
import {
  type BenchWorker,
  handle,
  readIndex,
  type SystemAdapter,
  type SystemSession,
  type SystemTarget,
  TASK_NAMES,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

const POLL_MS = 10;
const KINDS = ["noop", "fail"] as const;

const COUNTS = `SELECT
  count(*) FILTER (WHERE status IN (0, 1)) AS pending,
  count(*) FILTER (WHERE status = 2) AS done,
  count(*) FILTER (WHERE status = 3) AS failed,
  count(DISTINCT json_extract(data, '$.i')) AS "distinct"
FROM plainjob_jobs WHERE type = ?`;
const BUSY = `SELECT EXISTS (SELECT 1 FROM plainjob_jobs WHERE status IN (0, 1) AND type = ?) AS busy`;

const silent = { error() {}, warn() {}, info() {}, debug() {} };

function requirePath(target: SystemTarget): string {
  if (!target.sqlitePath) throw new Error("plainjob needs a file");
  return target.sqlitePath;
}

async function openQueue(path: string): Promise<{ queue: Queue; db: Database.Database }> {
  const [{ better, defineQueue }, { default: Sqlite }] = await Promise.all([
    import("plainjob"),
    import("better-sqlite3"),
  ]);
  const db = new Sqlite(path);
  db.pragma("journal_mode = WAL");
  return { queue: defineQueue({ connection: better(db), logger: silent }), db };
}

class PlainjobWorker implements BenchWorker {
  private workers: { stop(): Promise<void> }[] = [];
  private running: Promise<void>[] = [];

  constructor(
    private readonly queue: Queue,
    private readonly spec: WorkerSpec,
  ) {}

  async start(): Promise<void> {
    const { defineWorker } = await import("plainjob");
    const spec = this.spec;
    for (const kind of KINDS) {
      for (let loop = 0; loop < spec.concurrency; loop++) {
        const worker = defineWorker(
          TASK_NAMES[kind],
          (job) => handle(spec, kind, readIndex(JSON.parse(job.data))),
          // `pollIntervall` (sic) is plainjob's option; its types do not list it.
          { queue: this.queue, logger: silent, pollIntervall: POLL_MS } as Parameters<typeof defineWorker>[2],
        );
        this.workers.push(worker);
        this.running.push(worker.start());
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
    await Promise.all(this.running);
    this.workers = [];
    this.running = [];
  }
}

class PlainjobSession implements SystemSession {
  constructor(
    private readonly queue: Queue,
    private readonly db: Database.Database,
    private readonly reads: SqliteCounts,
  ) {}

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    this.queue.add(TASK_NAMES[kind], { i });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    this.queue.addMany(
      TASK_NAMES[kind],
      Array.from({ length: count }, (_, k) => ({ i: from + k })),
    );
  }

  async counts(kind: TaskKind) {
    return this.reads.counts(kind);
  }

  async settled(kind: TaskKind) {
    return this.reads.settled(kind);
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new PlainjobWorker(this.queue, spec);
  }

  async close(): Promise<void> {
    this.queue.close();
    this.reads.close();
    if (this.db.open) this.db.close();
  }
}

export const plainjobSystem: SystemAdapter = {
  id: "plainjob",
  label: "plainjob 0.0.14 sqlite (in-process)",
  storage: "sqlite",
  inProcess: true,
  notes: `c defineWorker loops per job type (one job at a time each), pollIntervall ${POLL_MS} ms (no wake-up), silent logger, WAL; done and failed jobs kept; no retries`,
  preload: () => Promise.all([import("plainjob"), import("better-sqlite3")]),
  async prepare(target) {
    const { queue, db } = await openQueue(requirePath(target));
    queue.close();
    if (db.open) db.close();
  },
  async open(target) {
    const path = requirePath(target);
    const { queue, db } = await openQueue(path);
    return new PlainjobSession(queue, db, new SqliteCounts(path, COUNTS, BUSY));
  },
};
