/**
 * The session shared by the three Soniq rows (Postgres, SQLite, memory): enqueue through the backend the
 * way core does (core fills every field of `NewJob`), counts from `getQueueStats`, and the worker.
 */
import { randomUUID } from "node:crypto";
import type { Backend, NewJob } from "@soniq/core";
import { ContractWorker } from "./soniq-contract-worker.js";
import {
  type BenchWorker,
  type Counts,
  type SystemSession,
  TASK_NAMES,
  type TaskKind,
  type WorkerSpec,
} from "./types.js";

/** Soniq's default result TTL: done rows are kept this long (the rows the table compares keep them). */
export const SONIQ_RESULT_TTL_MS = 300_000;

export function newJob(kind: TaskKind, i: number): NewJob {
  return {
    id: randomUUID(),
    jobName: TASK_NAMES[kind],
    args: { i },
    argsHash: null,
    queue: "default",
    priority: 100,
    maxAttempts: kind === "fail" ? 1 : 3,
    scheduledAt: null,
    dedupKey: null,
    unique: false,
    producerId: null,
  };
}

export class SoniqSession implements SystemSession {
  constructor(
    readonly backend: Backend<unknown>,
    /** A cheaper exact count straight from storage (Postgres), else `getQueueStats`. */
    private readonly countQuery: ((kind: TaskKind) => Promise<Counts>) | null,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  async enqueueOne(kind: TaskKind, i: number): Promise<void> {
    await this.backend.enqueue(newJob(kind, i));
  }

  async enqueueBatch(kind: TaskKind, from: number, count: number): Promise<void> {
    await this.backend.enqueueMany(Array.from({ length: count }, (_, k) => newJob(kind, from + k)));
  }

  async counts(kind: TaskKind): Promise<Counts> {
    if (this.countQuery) return this.countQuery(kind);
    // Each measurement has its own storage and one kind of job, so whole-queue stats are the job's counts.
    const s = await this.backend.getQueueStats();
    return { pending: s.queued + s.processing, done: s.done, failed: s.dead_letter, distinct: null };
  }

  async createWorker(spec: WorkerSpec): Promise<BenchWorker> {
    return new ContractWorker(this.backend, spec, SONIQ_RESULT_TTL_MS);
  }

  async close(): Promise<void> {
    await this.backend.close();
    await this.onClose();
  }
}
