/**
 * Producer routines: the enqueue side of every workload. They run in the parent for systems with a
 * database server, and inside the worker's process for in-process systems (memory, SQLite), where the
 * parent asks for them over IPC. Either way the timing is taken where the enqueues happen.
 */
import { now, sleep } from "./clock.js";
import type { Counts, QueueLimit, StepCounts, SystemSession, TaskKind } from "./systems/types.js";

export type ProduceRequest =
  /** `n` single awaited enqueues, one after another (`async`: through `enqueueOneAsync`). */
  | { mode: "sequential"; kind: TaskKind; n: number; async?: boolean }
  /** `n` jobs through the bulk API, `batchSize` per call, calls one after another (over `queues` queues). */
  | { mode: "batches"; kind: TaskKind; n: number; batchSize: number; queues?: number }
  /** `n` single enqueues, one starting every `intervalMs`; records when each call began. */
  | { mode: "paced"; kind: TaskKind; n: number; intervalMs: number }
  /**
   * Steady arrival (W7): `n` jobs at `ratePerSec`; every `tickMs` the jobs due by then go in one bulk call
   * (a call that overruns a tick makes the next batch larger, so the rate holds on average). Records when
   * each job's call began.
   */
  | { mode: "steady"; kind: TaskKind; n: number; ratePerSec: number; tickMs: number }
  /** W8: one flow of `n` noop steps, jobs 0..n-2 the parents of job n-1 (systems with `flows`). */
  | { mode: "fan-in"; kind: "noop"; n: number };

export interface ProduceResult {
  elapsedMs: number;
  /** Per job index, the clock reading just before its enqueue call (paced and steady modes). */
  enqueuedAt: number[] | null;
}

export async function produce(session: SystemSession, req: ProduceRequest): Promise<ProduceResult> {
  await session.connectProducer?.();
  const started = now();
  if (req.mode === "sequential") {
    if (req.async) {
      if (!session.enqueueOneAsync) throw new Error("this system has no asynchronous enqueue");
      for (let i = 0; i < req.n; i++) await session.enqueueOneAsync(req.kind, i);
    } else {
      for (let i = 0; i < req.n; i++) await session.enqueueOne(req.kind, i);
    }
    return { elapsedMs: now() - started, enqueuedAt: null };
  }
  if (req.mode === "batches") {
    for (let from = 0; from < req.n; from += req.batchSize) {
      await session.enqueueBatch(req.kind, from, Math.min(req.batchSize, req.n - from), req.queues);
    }
    return { elapsedMs: now() - started, enqueuedAt: null };
  }
  if (req.mode === "steady") return produceSteady(session, req, started);
  if (req.mode === "fan-in") {
    if (!session.startFanIn) throw new Error("this system has no workflows");
    await session.startFanIn(req.n);
    return { elapsedMs: now() - started, enqueuedAt: null };
  }
  const enqueuedAt: number[] = [];
  for (let i = 0; i < req.n; i++) {
    const slot = started + i * req.intervalMs;
    const wait = slot - now();
    if (wait > 0) await sleep(wait);
    enqueuedAt.push(now());
    await session.enqueueOne(req.kind, i);
  }
  return { elapsedMs: now() - started, enqueuedAt };
}

async function produceSteady(
  session: SystemSession,
  req: Extract<ProduceRequest, { mode: "steady" }>,
  started: number,
): Promise<ProduceResult> {
  const enqueuedAt = new Array<number>(req.n);
  let sent = 0;
  while (sent < req.n) {
    const at = now();
    // Job k is due at started + k / rate: the first at once.
    const due = Math.min(req.n, Math.floor(((at - started) * req.ratePerSec) / 1000) + 1);
    if (due > sent) {
      enqueuedAt.fill(at, sent, due);
      await session.enqueueBatch(req.kind, sent, due - sent);
      sent = due;
    }
    // The next tick boundary from now (after an overrun: the first one still ahead, no burst of catch-ups).
    const elapsed = now() - started;
    await sleep((Math.floor(elapsed / req.tickMs) + 1) * req.tickMs - elapsed);
  }
  return { elapsedMs: now() - started, enqueuedAt };
}

/** The enqueue side of a measurement, wherever it runs. */
export interface ProducerHandle {
  produce(req: ProduceRequest): Promise<ProduceResult>;
  counts(kind: TaskKind): Promise<Counts>;
  settled(kind: TaskKind): Promise<boolean>;
  limitQueue(limit: QueueLimit): Promise<void>;
  /** W9: the step checkpoints stored for the jobs of a kind (systems with `steps`). */
  stepCounts(kind: TaskKind): Promise<StepCounts>;
  close(): Promise<void>;
}

export async function readStepCounts(session: SystemSession, kind: TaskKind): Promise<StepCounts> {
  if (!session.stepCounts) throw new Error("this system has no durable steps");
  return session.stepCounts(kind);
}

export async function configureLimit(session: SystemSession, limit: QueueLimit): Promise<void> {
  if (!session.limitQueue) throw new Error("this system has no queue limits");
  await session.limitQueue(limit);
}

export function localProducer(session: SystemSession): ProducerHandle {
  return {
    produce: (req) => produce(session, req),
    counts: (kind) => session.counts(kind),
    settled: (kind) => session.settled(kind),
    limitQueue: (limit) => configureLimit(session, limit),
    stepCounts: (kind) => readStepCounts(session, kind),
    close: () => session.close(),
  };
}
