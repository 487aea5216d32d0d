/**
 * The one small interface every benchmarked system implements (one file per system in this folder).
 *
 * A `SystemSession` is opened once per process that needs it: the parent opens one to enqueue and to read
 * counts, the worker child opens one to run the worker. Systems without a separate database server
 * (`inProcess`: Soniq on memory, and on SQLite where wake-ups are in-process) do everything in the child,
 * and the parent drives them over IPC (see `host-client.ts`).
 */

/**
 * Which handler a job runs: a no-op, or one that throws. `fail` jobs have one attempt (W4); `retry` jobs have
 * `RETRY_ATTEMPTS`, retried at once (no backoff), so each runs that many times before its terminal failure
 * (w4-retry).
 */
export type TaskKind = QueueTaskKind | StepTaskKind;
/** The job queue workloads' kinds (W1-W8), which every system runs. */
export type QueueTaskKind = "noop" | "fail" | "retry";
/**
 * W9 and W9s (systems with `steps`): `steps` jobs run `STEPS_PER_JOB` durable no-op steps (`runSteps`), `sleep`
 * jobs one durable sleep of `SLEEP_MS` (`runSleep`). Both end done.
 */
export type StepTaskKind = "steps" | "sleep";

/** A queue workload's kind; a W9/W9s kind throws (a system without durable steps never gets one). */
export function queueKind(kind: TaskKind): QueueTaskKind {
  if (kind === "steps" || kind === "sleep")
    throw new Error(`"${kind}" jobs need durable steps, which this system does not run`);
  return kind;
}

/** W9: durable steps per `steps` job. */
export const STEPS_PER_JOB = 10;
/** W9s: the durable sleep of a `sleep` job. */
export const SLEEP_MS = 2_000;

/** Attempts of a `retry` job, all of them failing. */
export const RETRY_ATTEMPTS = 3;

/** How many handler runs a job of each kind gets (every run of a throwing handler fails). */
export function runsPerJob(kind: TaskKind): number {
  return kind === "retry" ? RETRY_ATTEMPTS : 1;
}

export type StorageKind = "postgres" | "sqlite" | "memory" | "redis";

/** Where a session's data lives. One fresh database (or file) per measurement. */
export interface SystemTarget {
  /** Postgres connection string of the measurement's own database, or null. */
  databaseUrl: string | null;
  /** SQLite file of the measurement, or null. */
  sqlitePath: string | null;
  /** Redis rows: the key prefix of the measurement (its keys are deleted afterwards). */
  redisPrefix?: string;
}

/** What the storage says about the measurement's jobs right now. */
export interface Counts {
  /** Jobs not yet finished (queued, processing, or waiting for a retry). */
  pending: number;
  /** Completed jobs still stored, or null when the system deletes them on completion. */
  done: number | null;
  /** Jobs in the system's terminal failed state (dead letter, `failed`). */
  failed: number;
  /** Distinct job indexes (`args.i`) over every stored row, or null when not cheaply readable. */
  distinct: number | null;
}

/** W9's storage check: the checkpoints the system stored for the jobs of a kind. */
export interface StepCounts {
  /** Completed step checkpoints (a step's stored value) over every job of the kind. */
  done: number;
}

/** A limit on the queue the jobs use (`soniq.queues.configure`'s shape): w1-limited. */
export interface QueueLimit {
  concurrency?: number;
  rateLimit?: { max: number; perMs: number };
}

/** W6: job `i` of a batch spread over `queues` queues goes to this one. */
export function queueName(i: number, queues: number): string {
  return `q${i % queues}`;
}

/** Called by the worker's handler as its first action, with the job's index. */
export type StartListener = (kind: TaskKind, i: number) => void;

export interface WorkerSpec {
  concurrency: number;
  onStart: StartListener;
  /** W9: step `k` of job `i` ran its function (a step answered from its checkpoint does not call this). */
  onStep?: (i: number, k: number) => void;
  /** W9s: a run of job `i` began (each run from the top: once before its sleep, and again after it on a replay). */
  onRun?: (i: number) => void;
  /** W9s: that run ended (returned, or left the handler at its sleep: the check of how many run at once). */
  onRunEnd?: (i: number) => void;
}

/** A worker that is built (connected, handlers registered) but claims nothing until `start()`. */
export interface BenchWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface SystemSession {
  /**
   * One awaited single enqueue of job `i`. `fail` jobs are enqueued with max attempts 1, `retry` jobs with
   * `RETRY_ATTEMPTS` and no delay between attempts.
   */
  enqueueOne(kind: TaskKind, i: number): Promise<void>;
  /**
   * W2 async (systems with `asyncEnqueue`): `enqueueOne` with the system's choice to return before the commit is
   * on disk (Soniq's `durability: "async"`).
   */
  enqueueOneAsync?(kind: TaskKind, i: number): Promise<void>;
  /**
   * One call of the system's bulk API for jobs `from .. from + count - 1`. With `queues` (systems with
   * `manyQueues` only), job `i` goes to queue `queueName(i, queues)`; without, to the default queue.
   */
  enqueueBatch(kind: TaskKind, from: number, count: number, queues?: number): Promise<void>;
  /**
   * Optional: opens what the session's first enqueue would otherwise open inside the clock (a pool's first
   * connection). The producer calls it before each timed run; later calls cost nothing. The peers' sessions
   * are opened connected (graphile-worker's `makeWorkerUtils` reads its schema, pg-boss's `start()`
   * connects); a session whose pool connects lazily implements this. Never called on a worker's session:
   * a worker's connections are part of its start.
   */
  connectProducer?(): Promise<void>;
  counts(kind: TaskKind): Promise<Counts>;
  /**
   * True when no job of this kind is pending. Polled every few ms while a drain is timed, so it must cost
   * the database next to nothing (an EXISTS on an index where there is one), unlike `counts`.
   */
  settled(kind: TaskKind): Promise<boolean>;
  createWorker(spec: WorkerSpec): Promise<BenchWorker>;
  /** Configures a limit on the default queue before any worker starts (systems with `queueLimits`). */
  limitQueue?(limit: QueueLimit): Promise<void>;
  /**
   * W8 (systems with `flows`): starts one flow of `n` noop jobs with indexes 0..n-1, where job n-1 runs only
   * after every other one is done (n-1 parents fanning in to one child). Returns once the flow is stored;
   * until the last parent is done, the child must not be pending (the workload checks `counts`).
   * A peer with parent/child jobs (BullMQ's `FlowProducer`: one parent with n-1 children) implements it too.
   */
  startFanIn?(n: number): Promise<void>;
  /**
   * W9 (systems with `steps`): the step checkpoints stored for the jobs of `kind`, read once at the end of the
   * drain (every job's `STEPS_PER_JOB` steps must be there).
   */
  stepCounts?(kind: TaskKind): Promise<StepCounts>;
  close(): Promise<void>;
}

/** A system's retention sweep, ready to run (see `SystemAdapter.openSweep`). */
export interface RetentionSweep {
  /** One sweep; resolves to the rows it deleted. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

export interface SystemAdapter {
  /** Stable id used on the command line and in the JSON (`graphile-fast`, `soniq-postgres`...). */
  readonly id: string;
  /** Table label. */
  readonly label: string;
  readonly storage: StorageKind;
  /** Producer and worker must share one process (no separate database server). */
  readonly inProcess: boolean;
  /**
   * `"node24"`: every process of this row (setup, producer, worker) runs on Node 24 (`node24.ts`): the
   * peers that need Node >= 22, and Soniq's rows again on that runtime. Such an adapter imports its library
   * only inside its methods, so the harness (Node 20) never loads it. Default: the harness's own Node.
   */
  readonly runtime?: "node24";
  /**
   * Server-side CPU seconds so far of a store that is not PostgreSQL (BullMQ's Redis), for the CPU-per-job
   * columns; read in the parent before and after a drain.
   */
  storeCpuSeconds?(): Promise<number>;
  /** One line for the table's notes: settings, and whether this is an interim adapter. */
  readonly notes: string;
  /** Not run unless named with `--systems` (diagnostic rows). */
  readonly optional?: boolean;
  /** Left out of `--quick` unless named with `--systems` (it keeps CI's smoke run short). */
  readonly notInQuick?: boolean;
  /**
   * Fraction of the W1/W4 job counts this system drains (default 1). Slow reference rows use less so the
   * whole bench stays within its time budget; their rates are still jobs/s.
   */
  readonly drainScale?: number;
  /** Why this system cannot run here (e.g. its package has not landed yet), or null. */
  unavailable?(): Promise<string | null>;
  /**
   * W5: writes `n` finished jobs into a fresh target in one statement, under another job name (so the
   * counts ignore them) but otherwise as a drain leaves them. Without it (and without `deletesDone`), W5
   * does not apply.
   */
  seedDone?(target: SystemTarget, n: number): Promise<void>;
  /**
   * W5/W5b's sweep (systems with `seedDone` and a retention sweep of their own): writes `n` finished jobs
   * whose retention has already run out, under another job name, as `seedDone` does (vacuumed, analysed).
   */
  seedExpired?(target: SystemTarget, n: number): Promise<void>;
  /**
   * Opens the system's own retention sweep on a target (connected, not yet run): `sweep()` runs it once,
   * the way the system's maintenance does, and returns the rows it deleted.
   */
  openSweep?(target: SystemTarget): Promise<RetentionSweep>;
  /** The system deletes a job when it completes: W5 is then its plain drain (its table never grows). */
  readonly deletesDone?: boolean;
  /** W6 applies: jobs can be spread over many queues and one worker serves them all. */
  readonly manyQueues?: boolean;
  /** w4-retry applies: a failed attempt can be retried at once (no backoff delay). */
  readonly immediateRetries?: boolean;
  /** w1-limited applies: the session implements `limitQueue`. */
  readonly queueLimits?: boolean;
  /** W2 async applies: the session implements `enqueueOneAsync` (an enqueue that does not wait for the disk). */
  readonly asyncEnqueue?: boolean;
  /** W8 applies: the session implements `startFanIn` (workflows / parent-child jobs). */
  readonly flows?: boolean;
  /**
   * W9 and W9s apply: durable steps and a durable sleep inside a job (`steps` and `sleep` jobs, `runSteps` and
   * `runSleep` as their handlers, `stepCounts` on the session).
   */
  readonly steps?: boolean;
  /**
   * Only W9 and W9s apply (a durable-execution engine beside the job queues, not one of them): its `noop`
   * jobs exist for W9's plain-job figure (a workflow with no step), not for W1-W8.
   */
  readonly stepsOnly?: boolean;
  /** Load what `open` needs ahead of time (modules imported on first use). */
  preload?(): Promise<unknown>;
  /** Create the schema in a fresh target. Runs once per measurement, before any session opens. */
  prepare(target: SystemTarget): Promise<void>;
  open(target: SystemTarget): Promise<SystemSession>;
}

/** The payload every job carries: its index in the measurement. */
export interface BenchArgs {
  i: number;
}

export const TASK_NAMES: Record<TaskKind, string> = {
  noop: "bench.noop",
  fail: "bench.fail",
  retry: "bench.retry",
  steps: "bench.steps",
  sleep: "bench.sleep",
};

/** The kind of a queue job from its task name (`noop` for a name that is none of them). */
export function kindOfTask(name: string): QueueTaskKind {
  return name === TASK_NAMES.fail ? "fail" : name === TASK_NAMES.retry ? "retry" : "noop";
}

export function readIndex(payload: unknown): number {
  if (typeof payload === "object" && payload !== null && "i" in payload) {
    const i = (payload as { i: unknown }).i;
    if (typeof i === "number") return i;
  }
  return -1;
}

/** The error failing handlers throw. */
export class BenchFailure extends Error {
  constructor(i: number) {
    super(`bench failure ${i}`);
    this.name = "BenchFailure";
  }
}

/** The handler every system runs: report the start, then return or throw. */
export async function handle(spec: WorkerSpec, kind: TaskKind, i: number): Promise<void> {
  spec.onStart(kind, i);
  if (kind !== "noop") throw new BenchFailure(i);
}

/** What a system's durable step call looks like to W9 (Soniq's `ctx.step`, DBOS's `runStep`, ...). */
export type StepCall = (name: string, fn: () => number) => Promise<number>;

/**
 * W9's handler on every system: report the start, then `STEPS_PER_JOB` no-op steps named `s0..s9`, each
 * returning its index (`for i in 0..9: await step("s" + i, () => i)`); a step that answers another value throws.
 */
export async function runSteps(spec: WorkerSpec, i: number, step: StepCall): Promise<void> {
  spec.onStart("steps", i);
  for (let k = 0; k < STEPS_PER_JOB; k++) {
    const value = await step(`s${k}`, () => {
      spec.onStep?.(i, k);
      return k;
    });
    if (value !== k) throw new Error(`step s${k} of job ${i} answered ${JSON.stringify(value)}`);
  }
}

/**
 * W9s's handler on every system: report the run, sleep `SLEEP_MS` durably (named `nap`), then report the
 * job's start: `onStart` comes once a job, after its sleep, whether the system waits in process (one run) or
 * runs the handler again from the top at the wake time (two runs).
 */
export async function runSleep(
  spec: WorkerSpec,
  i: number,
  sleep: (name: string, ms: number) => Promise<void>,
): Promise<void> {
  spec.onRun?.(i);
  try {
    await sleep("nap", SLEEP_MS);
    spec.onStart("sleep", i);
  } finally {
    spec.onRunEnd?.(i);
  }
}
