/**
 * DBOS Transact (`@dbos-inc/dbos-sdk` 5.3.0) on PostgreSQL, beside Soniq's durable steps (W9, W9s only): its
 * system tables (schema `dbos`) in the measurement's own database. A job is a workflow enqueued on one DBOS
 * queue: the producer enqueues by name through `DBOSClient` (its API for a process that does not run the
 * workflows; no bulk call, so a batch is that many concurrent `enqueue` calls), the worker is a launched DBOS
 * process whose queue runs `workerConcurrency` c workflows at once. A W9 job is a workflow of 10
 * `DBOS.runStep` calls (one checkpoint row each), a W9s job one `DBOS.sleep(2_000)` (a durable sleep: its wake
 * time is a checkpoint, and the workflow waits in its process, holding its slot on the queue), a plain job a
 * workflow with no step. DBOS finds queued work by polling the queue: every `minPollingIntervalMs` (default
 * 1 s, which at c10 starts 10 workflows a second) a dispatch takes what the free slots allow; the bench sets
 * 10 ms, as plainjob's row sets its poll. DBOS is one runtime per process (`DBOS.launch`), so the worker host
 * runs one worker.
 */
import type { DBOSClient, DLogger } from "@dbos-inc/dbos-sdk";
import type pg from "pg";
import { harnessPool } from "../pg-admin.js";
import {
  type BenchWorker,
  type Counts,
  handle,
  runSleep,
  runSteps,
  type StepCounts,
  type SystemAdapter,
  type SystemSession,
  type SystemTarget,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

type Dbos = typeof import("@dbos-inc/dbos-sdk");

const APP = "soniq-bench";
const QUEUE = "bench";
/** The queue's dispatch poll (DBOS's default is 1,000 ms). */
const POLL_MS = 10;

const WORKFLOWS: Record<"noop" | "steps" | "sleep", string> = {
  noop: "benchNoop",
  steps: "benchSteps",
  sleep: "benchSleep",
};

function workflowName(kind: TaskKind): string {
  if (kind === "noop" || kind === "steps" || kind === "sleep") return WORKFLOWS[kind];
  throw new Error(`the dbos row runs no "${kind}" jobs (W9 and W9s only)`);
}

/**
 * Pending: queued, delayed or running; done: SUCCESS; failed: ERROR, CANCELLED or out of recovery attempts.
 * A workflow's arguments (the job's index) are in `workflow_input` (or, in older rows, on the status row).
 */
const COUNTS = `SELECT
  count(*) FILTER (WHERE ws.status IN ('ENQUEUED', 'DELAYED', 'PENDING'))::int AS pending,
  count(*) FILTER (WHERE ws.status = 'SUCCESS')::int AS done,
  count(*) FILTER (WHERE ws.status IN ('ERROR', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED', 'CANCELLED'))::int AS failed,
  count(DISTINCT COALESCE(wi.inputs, ws.inputs))::int AS distinct
FROM dbos.workflow_status ws LEFT JOIN dbos.workflow_input wi ON wi.workflow_uuid = ws.workflow_uuid
WHERE ws.name = $1`;

const SETTLED = `SELECT NOT EXISTS (SELECT 1 FROM dbos.workflow_status
  WHERE status IN ('ENQUEUED', 'DELAYED', 'PENDING') AND name = $1) AS settled`;

/** W9: the checkpoints of the workflows' steps (`s0`..`s9`) that returned a value. */
const STEP_COUNTS = `SELECT count(*)::int AS done FROM dbos.operation_outputs o
  JOIN dbos.workflow_status w ON w.workflow_uuid = o.workflow_uuid
  WHERE w.name = $1 AND o.function_name ~ '^s[0-9]+$' AND o.error IS NULL`;

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("DBOS needs a Postgres database");
  return target.databaseUrl;
}

/** DBOS's logs: its info lines (a queue registered, launched) dropped, warnings and errors on stderr. */
const quiet: DLogger = {
  info: () => {},
  debug: () => {},
  warn: (entry) => process.stderr.write(`dbos: ${String(entry)}\n`),
  error: (entry) => process.stderr.write(`dbos: ${entry instanceof Error ? entry.stack : String(entry)}\n`),
};

let loading: Promise<Dbos> | null = null;
function load(): Promise<Dbos> {
  loading ??= import("@dbos-inc/dbos-sdk");
  return loading;
}

/** The worker's spec, read by the registered workflows (one DBOS runtime, so one worker, per process). */
let current: WorkerSpec | null = null;
function spec(): WorkerSpec {
  if (!current) throw new Error("a dbos workflow ran with no bench worker");
  return current;
}

let registered = false;
/** Registers the bench's workflows once per process, before `DBOS.launch`. */
function register({ DBOS }: Dbos): void {
  if (registered) return;
  registered = true;
  DBOS.registerWorkflow(async (i: number) => handle(spec(), "noop", i), { name: WORKFLOWS.noop });
  DBOS.registerWorkflow(
    async (i: number) => runSteps(spec(), i, (name, fn) => DBOS.runStep(async () => fn(), { name })),
    { name: WORKFLOWS.steps },
  );
  DBOS.registerWorkflow(async (i: number) => runSleep(spec(), i, (_name, ms) => DBOS.sleep(ms)), {
    name: WORKFLOWS.sleep,
  });
}

class DbosWorker implements BenchWorker {
  private launched = false;

  constructor(
    private readonly url: string,
    private readonly workerSpec: WorkerSpec,
  ) {}

  async start(): Promise<void> {
    const dbos = await load();
    register(dbos);
    current = this.workerSpec;
    // The queue's concurrency is stored in its row: set it before launch, whose dispatcher reads the row at once
    // (set after, the first dispatch would take every queued workflow).
    const client = await dbos.DBOSClient.create({
      systemDatabaseUrl: this.url,
      applicationName: APP,
      logger: quiet,
    });
    try {
      await client.registerQueue(QUEUE, {
        workerConcurrency: this.workerSpec.concurrency,
        minPollingIntervalMs: POLL_MS,
        onConflict: "always_update",
        applicationName: APP,
      });
    } finally {
      await client.destroy();
    }
    dbos.DBOS.setConfig({
      name: APP,
      systemDatabaseUrl: this.url,
      runMigrations: false,
      logger: quiet,
    });
    await dbos.DBOS.launch();
    this.launched = true;
  }

  async stop(): Promise<void> {
    if (!this.launched) return;
    this.launched = false;
    const { DBOS } = await load();
    await DBOS.shutdown({ workflowCompletionTimeoutMS: 30_000 });
    current = null;
  }
}

class DbosSession implements SystemSession {
  private readonly pool: pg.Pool;
  private client: Promise<DBOSClient> | null = null;

  constructor(private readonly url: string) {
    this.pool = harnessPool(url, "dbos counts pool");
  }

  private dbosClient(): Promise<DBOSClient> {
    this.client ??= load().then(({ DBOSClient }) =>
      DBOSClient.create({ systemDatabaseUrl: this.url, applicationName: APP, logger: quiet }),
    );
    return this.client;
  }

  async connectProducer(): Promise<void> {
    await this.dbosClient();
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    const client = await this.dbosClient();
    await client.enqueue({ queueName: QUEUE, workflowName: workflowName(kind) }, i);
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    const client = await this.dbosClient();
    const options = { queueName: QUEUE, workflowName: workflowName(kind) };
    await Promise.all(Array.from({ length: count }, (_, k) => client.enqueue(options, from + k)));
  }

  async counts(kind: TaskKind): Promise<Counts> {
    const row = (await this.pool.query<Counts>(COUNTS, [workflowName(kind)])).rows[0];
    if (!row) throw new Error("dbos counts returned no row");
    return row;
  }

  async settled(kind: TaskKind): Promise<boolean> {
    const res = await this.pool.query<{ settled: boolean }>(SETTLED, [workflowName(kind)]);
    return res.rows[0]?.settled === true;
  }

  async stepCounts(kind: TaskKind): Promise<StepCounts> {
    const row = (await this.pool.query<StepCounts>(STEP_COUNTS, [workflowName(kind)])).rows[0];
    if (!row) throw new Error("dbos step counts returned no row");
    return row;
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new DbosWorker(this.url, spec);
  }

  async close(): Promise<void> {
    if (this.client) await (await this.client).destroy();
    await this.pool.end();
  }
}

export const dbosSystem: SystemAdapter = {
  id: "dbos",
  label: "DBOS Transact 5.3.0 postgres",
  storage: "postgres",
  inProcess: false,
  steps: true,
  stepsOnly: true,
  notes:
    "W9/W9s only: workflows enqueued by name through DBOSClient (no bulk call: a batch is concurrent enqueue() calls) on one queue with workerConcurrency c and minPollingIntervalMs 10 (default 1 s); 10 DBOS.runStep per W9 job, DBOS.sleep(2000) per W9s job (waits in its process, holding its slot)",
  preload: load,
  unavailable: () =>
    load().then(
      () => null,
      (err: unknown) => `@dbos-inc/dbos-sdk could not be loaded: ${err instanceof Error ? err.message : err}`,
    ),
  async prepare(target) {
    const url = requireUrl(target);
    const { DBOS, DBOSClient } = await load();
    // `DBOS.migrate` logs through a console logger of its own (no logger option): its line would land in the
    // bench's stdout, between the table's lines, so stdout's console.log is quiet while it runs.
    const log = console.log;
    console.log = () => {};
    try {
      await DBOS.migrate(url);
    } finally {
      console.log = log;
    }
    // The queue's row, so the producer's first enqueue finds it (the worker sets its concurrency at start).
    const client = await DBOSClient.create({ systemDatabaseUrl: url, applicationName: APP, logger: quiet });
    try {
      await client.registerQueue(QUEUE, { minPollingIntervalMs: POLL_MS, applicationName: APP });
    } finally {
      await client.destroy();
    }
  },
  async open(target) {
    return new DbosSession(requireUrl(target));
  },
};
