/**
 * The session shared by the Soniq rows. `SoniqAppSession` goes through the public API exactly as an
 * application would: `new Soniq({ backend })` with default settings (done rows kept for the default result
 * TTL), `soniq.job(...)`, `enqueue`/`enqueueMany`, `soniq.worker({ concurrency })`.
 * `SoniqContractSession` (the "contract loop" rows, not run by default) drives the backend directly with a
 * minimal loop, to separate what the backend costs from what the worker runtime adds.
 */
import { randomUUID } from "node:crypto";
import {
  type FlowStepDefinition,
  type Plugin,
  Soniq,
  type SoniqOptions,
  type Worker,
  type WorkerOptions,
} from "@soniq/core";
import type { Backend, NewJob } from "@soniq/core/backend";
import { recordIncident } from "../incidents.js";
import { ContractWorker } from "./soniq-contract-worker.js";
import {
  type BenchArgs,
  type BenchWorker,
  type Counts,
  handle,
  type QueueLimit,
  queueName,
  RETRY_ATTEMPTS,
  readIndex,
  runSleep,
  runSteps,
  type StepCounts,
  type SystemSession,
  TASK_NAMES,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

/** Soniq's default result TTL (core's `resultTtlMs` default): the contract loop keeps done rows as long. */
const SONIQ_RESULT_TTL_MS = 300_000;

/** Exact counts straight from storage (Postgres), else the session falls back to the queue stats. */
export interface CountQuery {
  counts(kind: TaskKind): Promise<Counts>;
  settled(kind: TaskKind): Promise<boolean>;
  /** W9: the step checkpoints stored for the jobs of a kind (else read through `soniq.jobs.steps`). */
  stepCounts?(kind: TaskKind): Promise<StepCounts>;
}

async function statsCounts(backend: Backend<unknown>): Promise<Counts> {
  // Each measurement has its own storage and one kind of job, so whole-queue stats are the job's counts.
  const s = await backend.jobs.stats({ queue: null });
  return { pending: s.queued + s.processing, done: s.done, failed: s.dead_letter, distinct: null };
}

/** The backend's pool connects on first use: one cheap read opens it (`SystemSession.connectProducer`). */
function connectOnce(backend: Backend<unknown>): () => Promise<void> {
  let opened: Promise<unknown> | null = null;
  return async () => {
    opened ??= backend.migrations.status();
    await opened;
  };
}

export class SoniqAppSession implements SystemSession {
  private readonly soniq: Soniq;
  private readonly defs;
  private spec: WorkerSpec | null = null;
  /** W9 without a count query: the ids of the `steps` jobs this session enqueued, to read their checkpoints. */
  private readonly stepJobIds: string[] = [];
  readonly connectProducer: () => Promise<void>;

  constructor(
    backend: Backend<unknown>,
    private readonly countQuery: CountQuery | null,
    private readonly onClose: () => Promise<void> = async () => {},
    /** Worker settings on top of `concurrency` (diagnostic rows only; the main rows use the defaults). */
    private readonly workerOptions: Omit<WorkerOptions, "concurrency"> = {},
    /** Plugins the row installs (the `-otel` row: OpenTelemetry). */
    plugins: readonly Plugin[] = [],
    /** Instance settings on top of the backend (the `-ttl0` row: `resultTtlMs: 0`). */
    soniqOptions: Omit<SoniqOptions, "backend"> = {},
  ) {
    this.soniq = new Soniq({ ...soniqOptions, backend });
    this.connectProducer = connectOnce(backend);
    for (const plugin of plugins) this.soniq.use(plugin);
    const idle: WorkerSpec = { concurrency: 0, onStart: () => {} };
    const spec = () => this.spec ?? idle;
    const run = (kind: TaskKind) => (args: BenchArgs) => handle(spec(), kind, readIndex(args));
    this.defs = {
      noop: this.soniq.job<BenchArgs>(TASK_NAMES.noop, run("noop")),
      fail: this.soniq.job<BenchArgs>(TASK_NAMES.fail, run("fail"), { maxAttempts: 1 }),
      retry: this.soniq.job<BenchArgs>(TASK_NAMES.retry, run("retry"), {
        maxAttempts: RETRY_ATTEMPTS,
        retry: { backoff: "fixed", delayMs: 0 },
      }),
      steps: this.soniq.job<BenchArgs>(TASK_NAMES.steps, (args, ctx) =>
        runSteps(spec(), readIndex(args), (name, fn) => ctx.step(name, fn)),
      ),
      sleep: this.soniq.job<BenchArgs>(TASK_NAMES.sleep, (args, ctx) =>
        runSleep(spec(), readIndex(args), (name, ms) => ctx.sleep(name, ms)),
      ),
    };
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    const handle = await this.defs[kind].enqueue({ i });
    if (kind === "steps" && !this.countQuery?.stepCounts) this.stepJobIds.push(handle.id);
  }

  async enqueueOneAsync(kind: TaskKind, i: number): Promise<void> {
    await this.defs[kind].enqueue({ i }, { durability: "async" });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number, queues?: number): Promise<void> {
    const job = this.defs[kind];
    const items = Array.from({ length: count }, (_, k) => {
      const i = from + k;
      return queues ? { job, args: { i }, options: { queue: queueName(i, queues) } } : { job, args: { i } };
    });
    const handles = await this.soniq.jobs.enqueueMany(items);
    if (kind === "steps" && !this.countQuery?.stepCounts) for (const h of handles) this.stepJobIds.push(h.id);
  }

  async stepCounts(kind: TaskKind): Promise<StepCounts> {
    if (this.countQuery?.stepCounts) return this.countQuery.stepCounts(kind);
    if (kind !== "steps") return { done: 0 };
    let done = 0;
    for (const id of this.stepJobIds) {
      for (const s of await this.soniq.jobs.steps(id)) if (s.kind === "step" && s.state === "done") done++;
    }
    return { done };
  }

  async limitQueue(limit: QueueLimit): Promise<void> {
    await this.soniq.queues.configure("default", limit);
  }

  async startFanIn(n: number): Promise<void> {
    const job = this.defs.noop;
    const steps: Record<string, FlowStepDefinition> = {};
    const parents: string[] = [];
    for (let i = 0; i < n - 1; i++) {
      steps[`p${i}`] = { job, args: { i } };
      parents.push(`p${i}`);
    }
    steps.total = { job, args: { i: n - 1 }, dependsOn: parents };
    await this.soniq.flows.start({ name: "bench.fan_in", steps });
  }

  counts(kind: TaskKind): Promise<Counts> {
    return this.countQuery ? this.countQuery.counts(kind) : statsCounts(this.soniq.backend);
  }

  async settled(kind: TaskKind): Promise<boolean> {
    if (this.countQuery) return this.countQuery.settled(kind);
    return (await statsCounts(this.soniq.backend)).pending === 0;
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    this.spec = spec;
    const worker: Worker = this.soniq.worker({ ...this.workerOptions, concurrency: spec.concurrency });
    // A claim, state write or heartbeat that failed: the worker survives it, the measurement does not count.
    worker.on("error", ({ error, during }) => recordIncident(`soniq worker (${during})`, error));
    return { start: () => worker.start(), stop: () => worker.stop() };
  }

  async close(): Promise<void> {
    await this.soniq.close();
    await this.onClose();
  }
}

function newJob(kind: TaskKind, i: number, queues?: number): NewJob {
  return {
    id: randomUUID(),
    jobName: TASK_NAMES[kind],
    args: { i },
    argsHash: null,
    queue: queues ? queueName(i, queues) : "default",
    priority: 100,
    maxAttempts: kind === "fail" ? 1 : kind === "retry" ? RETRY_ATTEMPTS : 3,
    scheduledAt: null,
    dedupKey: null,
    unique: false,
    producerId: null,
    group: null,
    flowId: null,
    stepRef: null,
    argsVersion: null,
    traceId: null,
    traceContext: null,
  };
}

export class SoniqContractSession implements SystemSession {
  readonly connectProducer: () => Promise<void>;

  constructor(
    private readonly backend: Backend<unknown>,
    private readonly countQuery: CountQuery | null,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {
    this.connectProducer = connectOnce(backend);
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.backend.jobs.enqueue(newJob(kind, i), {});
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number, queues?: number): Promise<void> {
    await this.backend.jobs.enqueueMany(
      Array.from({ length: count }, (_, k) => newJob(kind, from + k, queues)),
      {},
    );
  }

  counts(kind: TaskKind): Promise<Counts> {
    return this.countQuery ? this.countQuery.counts(kind) : statsCounts(this.backend);
  }

  async settled(kind: TaskKind): Promise<boolean> {
    if (this.countQuery) return this.countQuery.settled(kind);
    return (await statsCounts(this.backend)).pending === 0;
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new ContractWorker(this.backend, spec, SONIQ_RESULT_TTL_MS);
  }

  async close(): Promise<void> {
    await this.backend.close();
    await this.onClose();
  }
}
