/**
 * OpenWorkflow (`openworkflow` 0.10.1, its Postgres backend on postgres.js 3.4.10) beside Soniq's durable steps
 * (W9, W9s only): its tables (schema `openworkflow`) in the measurement's own database, created by
 * `BackendPostgres.connect`'s migrations. A job is a workflow run started with `runWorkflow` (no bulk call: a
 * batch is that many concurrent calls), the worker is `ow.newWorker({ concurrency })` (its documented knob: it
 * claims one run per free slot, and polls with a backoff from 100 ms to 1 s while it finds nothing). A W9 job
 * runs 10 `step.run` calls (a step attempt row created, then completed), a W9s job one `step.sleep("nap",
 * "2s")` (the run is parked with its wake time and the slot is freed; at the wake time a worker claims it again
 * and runs the function from the top, the finished steps answering from their rows), a plain job a workflow
 * with no step. Default namespace, default retry policy.
 */
import type { OpenWorkflow } from "openworkflow";
import type { BackendPostgres } from "openworkflow/postgres";
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

type StepKindName = "noop" | "steps" | "sleep";
const WORKFLOWS: Record<StepKindName, string> = {
  noop: "bench-noop",
  steps: "bench-steps",
  sleep: "bench-sleep",
};

function stepKind(kind: TaskKind): StepKindName {
  if (kind === "noop" || kind === "steps" || kind === "sleep") return kind;
  throw new Error(`the openworkflow row runs no "${kind}" jobs (W9 and W9s only)`);
}

/** Pending: not yet finished (`sleeping` is the legacy status of a parked run); done: completed. */
const COUNTS = `SELECT
  count(*) FILTER (WHERE status IN ('pending', 'running', 'sleeping'))::int AS pending,
  count(*) FILTER (WHERE status IN ('completed', 'succeeded'))::int AS done,
  count(*) FILTER (WHERE status IN ('failed', 'canceled'))::int AS failed,
  count(DISTINCT input->>'i')::int AS distinct
FROM openworkflow.workflow_runs WHERE workflow_name = $1`;

const SETTLED = `SELECT NOT EXISTS (SELECT 1 FROM openworkflow.workflow_runs
  WHERE workflow_name = $1 AND status IN ('pending', 'running', 'sleeping')) AS settled`;

/** W9: the completed function steps (`s0`..`s9`) of the runs. */
const STEP_COUNTS = `SELECT count(*)::int AS done FROM openworkflow.step_attempts sa
  JOIN openworkflow.workflow_runs wr ON wr.namespace_id = sa.namespace_id AND wr.id = sa.workflow_run_id
  WHERE wr.workflow_name = $1 AND sa.kind = 'function' AND sa.status IN ('completed', 'succeeded')`;

type Ow = typeof import("openworkflow");
type OwPostgres = typeof import("openworkflow/postgres");

let loading: Promise<[Ow, OwPostgres]> | null = null;
function load(): Promise<[Ow, OwPostgres]> {
  loading ??= Promise.all([import("openworkflow"), import("openworkflow/postgres")]);
  return loading;
}

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("OpenWorkflow needs a Postgres database");
  return target.databaseUrl;
}

interface Payload {
  i: number;
}

class OwWorker implements BenchWorker {
  private worker: { start(): Promise<void>; stop(): Promise<void> } | null = null;

  constructor(
    private readonly ow: OpenWorkflow,
    private readonly concurrency: number,
  ) {}

  async start(): Promise<void> {
    this.worker = this.ow.newWorker({ concurrency: this.concurrency });
    await this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    this.worker = null;
  }
}

class OwSession implements SystemSession {
  private readonly pool: pg.Pool;
  private readonly ow: OpenWorkflow;
  private readonly specs: Record<StepKindName, ReturnType<Ow["defineWorkflowSpec"]>>;
  private implemented = false;

  constructor(
    private readonly backend: BackendPostgres,
    [{ OpenWorkflow: Client, defineWorkflowSpec }]: [Ow, OwPostgres],
    url: string,
  ) {
    this.pool = harnessPool(url, "openworkflow counts pool");
    this.ow = new Client({ backend });
    this.specs = {
      noop: defineWorkflowSpec<Payload, void>({ name: WORKFLOWS.noop }),
      steps: defineWorkflowSpec<Payload, void>({ name: WORKFLOWS.steps }),
      sleep: defineWorkflowSpec<Payload, void>({ name: WORKFLOWS.sleep }),
    } as Record<StepKindName, ReturnType<Ow["defineWorkflowSpec"]>>;
  }

  async connectProducer(): Promise<void> {
    await this.backend.countWorkflowRuns();
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.ow.runWorkflow(this.specs[stepKind(kind)], { i });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    const spec = this.specs[stepKind(kind)];
    await Promise.all(Array.from({ length: count }, (_, k) => this.ow.runWorkflow(spec, { i: from + k })));
  }

  async counts(kind: TaskKind): Promise<Counts> {
    const row = (await this.pool.query<Counts>(COUNTS, [WORKFLOWS[stepKind(kind)]])).rows[0];
    if (!row) throw new Error("openworkflow counts returned no row");
    return row;
  }

  async settled(kind: TaskKind): Promise<boolean> {
    const res = await this.pool.query<{ settled: boolean }>(SETTLED, [WORKFLOWS[stepKind(kind)]]);
    return res.rows[0]?.settled === true;
  }

  async stepCounts(kind: TaskKind): Promise<StepCounts> {
    const row = (await this.pool.query<StepCounts>(STEP_COUNTS, [WORKFLOWS[stepKind(kind)]])).rows[0];
    if (!row) throw new Error("openworkflow step counts returned no row");
    return row;
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    if (!this.implemented) {
      this.implemented = true;
      this.ow.implementWorkflow(this.specs.noop, ({ input }) => handle(spec, "noop", (input as Payload).i));
      this.ow.implementWorkflow(this.specs.steps, ({ input, step }) =>
        runSteps(spec, (input as Payload).i, (name, fn) => step.run({ name }, fn)),
      );
      this.ow.implementWorkflow(this.specs.sleep, ({ input, step }) =>
        runSleep(spec, (input as Payload).i, (name, ms) => step.sleep(name, `${ms}ms`)),
      );
    }
    return new OwWorker(this.ow, spec.concurrency);
  }

  async close(): Promise<void> {
    await this.backend.stop();
    await this.pool.end();
  }
}

export const openWorkflowSystem: SystemAdapter = {
  id: "openworkflow",
  label: "OpenWorkflow 0.10.1 postgres",
  storage: "postgres",
  inProcess: false,
  steps: true,
  stepsOnly: true,
  notes:
    "W9/W9s only: runWorkflow() per run (no bulk call: a batch is concurrent calls), ow.newWorker({ concurrency: c }) (one claim per free slot, 100 ms-1 s poll backoff when idle); 10 step.run per W9 job, step.sleep('nap', '2000ms') per W9s job (the run is parked and replayed from the top at its wake time)",
  preload: load,
  unavailable: () =>
    load().then(
      () => null,
      (err: unknown) => `openworkflow could not be loaded: ${err instanceof Error ? err.message : err}`,
    ),
  async prepare(target) {
    const [, { BackendPostgres }] = await load();
    const backend = await BackendPostgres.connect(requireUrl(target));
    await backend.stop();
  },
  async open(target) {
    const url = requireUrl(target);
    const loaded = await load();
    const backend = await loaded[1].BackendPostgres.connect(url, { runMigrations: false });
    return new OwSession(backend, loaded, url);
  },
};
