/**
 * BullMQ 6.7.0 on the machine's local Redis (`redis-admin.ts`). One queue per task kind, one `Worker` per
 * queue at the measured concurrency; jobs carry `attempts` (1 for failing jobs, 3 without backoff for W4
 * retry, which BullMQ retries at once). Completed and failed jobs are kept (BullMQ's default), as Soniq keeps
 * done rows. Each measurement's keys live under their own `prefix`, removed afterwards.
 *
 * W8 uses BullMQ's own flows: in BullMQ a parent job waits for its children, so Soniq's n-1 parents fanning
 * in to one child are one BullMQ parent (job n-1) with n-1 children (jobs 0..n-2), all on the noop queue,
 * written by one `FlowProducer.add` (one atomic call: BullMQ's way to add a flow). The parent sits in
 * `waiting-children` until its last child completes; like a Soniq step waiting on its parents it is no
 * runnable job yet, so `counts` does not report it pending (the harness checks n-1 pending after the start,
 * and n done at the end, so a parent that never left `waiting-children` makes the run INVALID).
 */
import { type ConnectionOptions, FlowProducer, Queue, Worker } from "bullmq";
import { recordIncident } from "../incidents.js";
import { REDIS_URL, redisCpuSeconds } from "../redis-admin.js";
import {
  type BenchWorker,
  type Counts,
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

const KINDS = ["noop", "fail", "retry"] as const;

/** Workers block on Redis: ioredis must not give up on a command (BullMQ requires this). */
function connection(): ConnectionOptions {
  return { url: REDIS_URL, maxRetriesPerRequest: null };
}

function requirePrefix(target: SystemTarget): string {
  if (!target.redisPrefix) throw new Error("BullMQ needs a Redis key prefix");
  return target.redisPrefix;
}

function attempts(kind: TaskKind): number {
  return kind === "fail" ? 1 : kind === "retry" ? RETRY_ATTEMPTS : 1;
}

/** BullMQ's queue names may not hold ':' (the key separator); task names are `bench.<kind>`. */
function queueOf(kind: TaskKind): string {
  return TASK_NAMES[kind];
}

class BullWorker implements BenchWorker {
  private readonly workers: Worker[] = [];

  constructor(
    private readonly prefix: string,
    private readonly spec: WorkerSpec,
  ) {}

  async start(): Promise<void> {
    const spec = this.spec;
    for (const kind of KINDS) {
      const worker = new Worker(queueOf(kind), (job) => handle(spec, kind, readIndex(job.data)), {
        connection: connection(),
        prefix: this.prefix,
        concurrency: spec.concurrency,
      });
      worker.on("error", (err) => recordIncident("bullmq worker", err));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    this.workers.length = 0;
  }
}

class BullSession implements SystemSession {
  private readonly queues: Record<QueueTaskKind, Queue>;
  /** W8's producer, opened with the session so its connection is up before a flow start is timed. */
  private readonly flows: FlowProducer;

  constructor(private readonly prefix: string) {
    const open = (kind: QueueTaskKind) => {
      const queue = new Queue(queueOf(kind), { connection: connection(), prefix });
      queue.on("error", (err) => recordIncident("bullmq queue", err));
      return queue;
    };
    this.queues = { noop: open("noop"), fail: open("fail"), retry: open("retry") };
    this.flows = new FlowProducer({ connection: connection(), prefix });
    this.flows.on("error", (err) => recordIncident("bullmq flow producer", err));
  }

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.queues[queueKind(kind)].add(TASK_NAMES[kind], { i }, { attempts: attempts(kind) });
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    const jobs = Array.from({ length: count }, (_, k) => ({
      name: TASK_NAMES[kind],
      data: { i: from + k },
      opts: { attempts: attempts(kind) },
    }));
    await this.queues[queueKind(kind)].addBulk(jobs);
  }

  /** W8: one flow, the parent (job n-1) over its n-1 children (jobs 0..n-2), in one atomic call. */
  async startFanIn(n: number): Promise<void> {
    const queueName = queueOf("noop");
    const children = Array.from({ length: n - 1 }, (_, i) => ({
      name: TASK_NAMES.noop,
      queueName,
      data: { i },
    }));
    await this.flows.add({ name: TASK_NAMES.noop, queueName, data: { i: n - 1 }, children });
  }

  async counts(kind: TaskKind): Promise<Counts> {
    // A parent in `waiting-children` is not runnable (W8: like a Soniq step waiting on its parents).
    const c = await this.queues[queueKind(kind)].getJobCounts(
      "wait",
      "active",
      "delayed",
      "prioritized",
      "completed",
      "failed",
    );
    const n = (k: string) => c[k] ?? 0;
    return {
      pending: n("wait") + n("active") + n("delayed") + n("prioritized"),
      done: n("completed"),
      failed: n("failed"),
      distinct: null,
    };
  }

  async settled(kind: TaskKind): Promise<boolean> {
    const c = await this.queues[queueKind(kind)].getJobCounts("wait", "active", "delayed", "prioritized");
    return Object.values(c).every((v) => v === 0);
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new BullWorker(this.prefix, spec);
  }

  async close(): Promise<void> {
    await Promise.all([...Object.values(this.queues).map((q) => q.close()), this.flows.close()]);
  }
}

export const bullmqSystem: SystemAdapter = {
  id: "bullmq",
  label: "BullMQ 6.7.0 (Redis)",
  storage: "redis",
  inProcess: false,
  immediateRetries: true,
  flows: true,
  notes:
    "local Redis; one Worker per queue at the measured concurrency, otherwise defaults (completed and failed jobs kept); W8 is one FlowProducer.add (one parent, n-1 children); store CPU is the Redis server's",
  storeCpuSeconds: redisCpuSeconds,
  async prepare(target) {
    requirePrefix(target);
  },
  async open(target) {
    return new BullSession(requirePrefix(target));
  },
};
