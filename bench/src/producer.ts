/**
 * Producer routines: the enqueue side of every workload. They run in the parent for systems with a
 * database server, and inside the worker's process for in-process systems (memory, SQLite), where the
 * parent asks for them over IPC. Either way the timing is taken where the enqueues happen.
 */
import { now, sleep } from "./clock.js";
import type { Counts, SystemSession, TaskKind } from "./systems/types.js";

export type ProduceRequest =
  /** `n` single awaited enqueues, one after another. */
  | { mode: "sequential"; kind: TaskKind; n: number }
  /** `n` jobs through the bulk API, `batchSize` per call, calls one after another. */
  | { mode: "batches"; kind: TaskKind; n: number; batchSize: number }
  /** `n` single enqueues, one starting every `intervalMs`; records when each call began. */
  | { mode: "paced"; kind: TaskKind; n: number; intervalMs: number };

export interface ProduceResult {
  elapsedMs: number;
  /** Per job index, the clock reading just before its enqueue call (paced mode only). */
  enqueuedAt: number[] | null;
}

export async function produce(session: SystemSession, req: ProduceRequest): Promise<ProduceResult> {
  const started = now();
  if (req.mode === "sequential") {
    for (let i = 0; i < req.n; i++) await session.enqueueOne(req.kind, i);
    return { elapsedMs: now() - started, enqueuedAt: null };
  }
  if (req.mode === "batches") {
    for (let from = 0; from < req.n; from += req.batchSize) {
      await session.enqueueBatch(req.kind, from, Math.min(req.batchSize, req.n - from));
    }
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

/** The enqueue side of a measurement, wherever it runs. */
export interface ProducerHandle {
  produce(req: ProduceRequest): Promise<ProduceResult>;
  counts(kind: TaskKind): Promise<Counts>;
  settled(kind: TaskKind): Promise<boolean>;
  close(): Promise<void>;
}

export function localProducer(session: SystemSession): ProducerHandle {
  return {
    produce: (req) => produce(session, req),
    counts: (kind) => session.counts(kind),
    settled: (kind) => session.settled(kind),
    close: () => session.close(),
  };
}
