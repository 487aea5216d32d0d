/**
 * graphile-worker 0.17.3, twice: with its documented fast settings (`localQueue.size` 500,
 * `completeJobBatchDelay` 0, `failJobBatchDelay` 0; see worker.graphile.org/docs/performance) and with its
 * defaults; and 0.18.0 (its latest, Node >= 22: on Node 24) with the same fast settings. It deletes a job when
 * it completes, so `done` is not countable: a drained queue is an empty table. The library is imported on
 * first use, so the harness on Node 20 never loads 0.18.
 */
import type { Runner, WorkerUtils } from "graphile-worker";
import type pg from "pg";
import { recordIncident } from "../incidents.js";
import { node24Unavailable } from "../node24.js";
import { benchPool, harnessPool } from "../pg-admin.js";
import {
  type BenchWorker,
  type Counts,
  handle,
  queueName,
  readIndex,
  type SystemAdapter,
  type SystemSession,
  type SystemTarget,
  TASK_NAMES,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

/**
 * Quiet, except that an error graphile-worker logs and survives (a pool's lost connection, a failed fetch or
 * completion) is an incident. A failing job is logged at level error too (`meta.failure`): that is W4's
 * normal outcome, not an incident.
 */
function makeLogger(mod: GraphileModule) {
  return new mod.Logger(() => (level, message, meta) => {
    if (level === "error" && (meta as { failure?: unknown } | undefined)?.failure !== true) {
      recordIncident("graphile-worker", message);
    }
  });
}

type GraphileModule = typeof import("graphile-worker");

/** Which release: 0.18's API is 0.17's for everything used here (typed as 0.17's). */
const RELEASES = {
  "0.17": () => import("graphile-worker"),
  // A specifier in a variable: TypeScript does not load 0.18's types next to 0.17's (same globals).
  "0.18": () => import(GRAPHILE_018) as Promise<GraphileModule>,
} as const;
const GRAPHILE_018: string = "graphile-worker-0.18";
type Release = keyof typeof RELEASES;

const loaded = new Map<Release, Promise<{ mod: GraphileModule; logger: ReturnType<typeof makeLogger> }>>();
function load(release: Release) {
  let found = loaded.get(release);
  if (!found) {
    found = RELEASES[release]().then((mod) => ({ mod, logger: makeLogger(mod) }));
    loaded.set(release, found);
  }
  return found;
}

interface GraphileTuning {
  release: Release;
  localQueueSize: number | null;
  batchDelays: boolean;
}

const COUNTS = `SELECT
  count(*) FILTER (WHERE j.attempts < j.max_attempts OR j.locked_at IS NOT NULL)::int AS pending,
  count(*) FILTER (WHERE j.attempts >= j.max_attempts AND j.locked_at IS NULL)::int AS failed,
  count(DISTINCT j.payload->>'i')::int AS distinct
FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
WHERE t.identifier = $1`;

const SETTLED = `SELECT NOT EXISTS (
  SELECT 1 FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
  WHERE t.identifier = $1 AND (j.attempts < j.max_attempts OR j.locked_at IS NOT NULL)) AS settled`;

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("graphile-worker needs a Postgres database");
  return target.databaseUrl;
}

function maxAttempts(kind: TaskKind): number {
  return kind === "fail" ? 1 : 25;
}

class GraphileWorker implements BenchWorker {
  private runner: Runner | null = null;

  constructor(
    private readonly url: string,
    private readonly spec: WorkerSpec,
    private readonly tuning: GraphileTuning,
  ) {}

  async start(): Promise<void> {
    const spec = this.spec;
    const worker: GraphileConfig.WorkerOptions = {};
    if (this.tuning.localQueueSize !== null) worker.localQueue = { size: this.tuning.localQueueSize };
    if (this.tuning.batchDelays) {
      worker.completeJobBatchDelay = 0;
      worker.failJobBatchDelay = 0;
    }
    const { mod, logger } = await load(this.tuning.release);
    this.runner = await mod.run({
      connectionString: this.url,
      concurrency: spec.concurrency,
      noHandleSignals: true,
      logger,
      taskList: {
        [TASK_NAMES.noop]: (payload) => handle(spec, "noop", readIndex(payload)),
        [TASK_NAMES.fail]: (payload) => handle(spec, "fail", readIndex(payload)),
      },
      preset: { worker },
    });
  }

  async stop(): Promise<void> {
    await this.runner?.stop();
    this.runner = null;
  }
}

/**
 * WorkerUtils on a pool of the harness's (with its error listener, ended and awaited by the harness). On a
 * pool of its own, `release()` removes graphile-worker's error listener and ends the pool without waiting,
 * so the FORCE drop of the measurement's database could hit a connection with no listener left.
 */
async function openUtils(url: string, release: Release): Promise<{ utils: WorkerUtils; pool: pg.Pool }> {
  const { mod, logger } = await load(release);
  const pool = benchPool(url, 10, "graphile-worker utils pool");
  try {
    return { utils: await mod.makeWorkerUtils({ pgPool: pool, logger }), pool };
  } catch (err) {
    await pool.end();
    throw err;
  }
}

class GraphileSession implements SystemSession {
  private readonly pool: pg.Pool;

  constructor(
    private readonly url: string,
    private readonly utils: WorkerUtils,
    private readonly utilsPool: pg.Pool,
    private readonly tuning: GraphileTuning,
  ) {
    this.pool = harnessPool(url, "graphile counts pool");
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.utils.addJob(TASK_NAMES[kind], { i }, { maxAttempts: maxAttempts(kind) });
  }

  /** With `queues`, each job gets a `queueName`: graphile-worker's named queues, which run serially. */
  async enqueueBatch(kind: TaskKind, from: number, count: number, queues?: number): Promise<void> {
    const specs = Array.from({ length: count }, (_, k) => ({
      identifier: TASK_NAMES[kind],
      payload: { i: from + k },
      maxAttempts: maxAttempts(kind),
      ...(queues ? { queueName: queueName(from + k, queues) } : {}),
    }));
    await this.utils.addJobs(specs);
  }

  async counts(kind: TaskKind): Promise<Counts> {
    const row = (await this.pool.query<Omit<Counts, "done">>(COUNTS, [TASK_NAMES[kind]])).rows[0];
    if (!row) throw new Error("graphile counts returned no row");
    return { ...row, done: null };
  }

  async settled(kind: TaskKind): Promise<boolean> {
    return (
      (await this.pool.query<{ settled: boolean }>(SETTLED, [TASK_NAMES[kind]])).rows[0]?.settled === true
    );
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new GraphileWorker(this.url, spec, this.tuning);
  }

  async close(): Promise<void> {
    await this.utils.release();
    await Promise.all([this.utilsPool.end(), this.pool.end()]);
  }
}

function graphileSystem(
  id: string,
  label: string,
  notes: string,
  tuning: GraphileTuning,
  drainScale = 1,
): SystemAdapter {
  return {
    id,
    label,
    drainScale,
    preload: () => load(tuning.release),
    storage: "postgres",
    inProcess: false,
    deletesDone: true,
    manyQueues: true,
    notes,
    async prepare(target) {
      const { utils, pool } = await openUtils(requireUrl(target), tuning.release);
      try {
        await utils.migrate();
      } finally {
        await utils.release();
        await pool.end();
      }
    },
    async open(target) {
      const url = requireUrl(target);
      const { utils, pool } = await openUtils(url, tuning.release);
      return new GraphileSession(url, utils, pool, tuning);
    },
  };
}

export const graphileFastSystem = graphileSystem(
  "graphile-fast",
  "graphile-worker 0.17.3 fast",
  "localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0 (its documented batching settings)",
  { release: "0.17", localQueueSize: 500, batchDelays: true },
);

/** Optional since the latest releases joined the bench: the 0.17 fast row shows what that release can do. */
export const graphileDefaultSystem: SystemAdapter = {
  ...graphileSystem(
    "graphile-default",
    "graphile-worker 0.17.3 defaults",
    "default settings (no local queue, one fetch and one completion query per job); drains a quarter of N (W1 5,000, W4 5,000) to fit the time budget",
    { release: "0.17", localQueueSize: null, batchDelays: false },
    0.25,
  ),
  optional: true,
};

export const graphile018FastSystem: SystemAdapter = {
  ...graphileSystem(
    "graphile-018-fast",
    "graphile-worker 0.18.0 fast (Node 24)",
    "localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0 (its documented batching settings); on Node 24 (it needs Node >= 22)",
    { release: "0.18", localQueueSize: 500, batchDelays: true },
  ),
  runtime: "node24",
  unavailable: async () => node24Unavailable(),
};
