/** Test support without storage: a recording stub backend, and helpers to catch errors and wait. */
import { expect } from "vitest";
import type { Soniq } from "../src/app/soniq.js";
import { BACKEND_FACETS, type Backend, type NewJob } from "../src/contract/index.js";
import type { Worker } from "../src/worker/worker.js";

/** A backend that records every call (as "facet.method") and answers with `answers` or a neutral value. */
export interface Call {
  method: string;
  args: unknown[];
}

const NEUTRAL: Record<string, (args: unknown[]) => unknown> = {
  "migrations.apply": () => ({ applied: ["0001"], pending: [], appliedNow: ["0001"] }),
  "jobs.enqueue": (args) => ({ id: (args[0] as NewJob).id, deduplicated: false }),
  "jobs.enqueueMany": (args) => (args[0] as NewJob[]).map((j) => ({ id: j.id, deduplicated: false })),
  "jobs.get": () => null,
  "jobs.cancel": () => false,
  "deadLetters.get": () => null,
  "deadLetters.replay": () => null,
  "deadLetters.purge": () => false,
};

export function stubBackend<TTx = { client: string }>(
  transactional = false,
  answers: Record<string, (...args: unknown[]) => unknown> = {},
): { backend: Backend<TTx>; calls: Call[] } {
  const calls: Call[] = [];
  const backend: Record<string, unknown> = {
    name: "stub",
    capabilities: {
      notify: false,
      transactionalEnqueue: transactional,
      advisoryLocks: false,
      multiProcess: false,
    },
    close: async () => {
      calls.push({ method: "close", args: [] });
    },
  };
  for (const [facet, methods] of Object.entries(BACKEND_FACETS)) {
    const f: Record<string, unknown> = {};
    for (const m of methods) {
      const method = `${facet}.${m}`;
      f[m] = async (...args: unknown[]) => {
        calls.push({ method, args });
        const answer = answers[method];
        if (answer) return answer(...args);
        return NEUTRAL[method]?.(args);
      };
    }
    backend[facet] = f;
  }
  return { backend: backend as unknown as Backend<TTx>, calls };
}

/** The error `fn` throws; fails the test if it returns. */
export function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

/** The error `p` rejects with; throws if it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

/** Polls `fn` until it stops throwing; fails with the last error after `timeoutMs`. */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A promise the test resolves by hand, to hold a handler where the test wants it. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Has a peer declare `worker` stale (a 1 ms threshold) and waits until the worker learnt it
 * (`worker:stale`) and re-registered itself as active.
 */
export async function expectStaleThenReregistered(soniq: Soniq, worker: Worker): Promise<void> {
  const stale = gate<string>();
  worker.on("worker:stale", ({ workerId }) => stale.open(workerId));
  await eventually(async () => {
    expect((await soniq.backend.workers.recoverStale(1)).workerIds).toContain(worker.id);
  });
  expect(await stale.promise).toBe(worker.id);
  await eventually(async () => {
    const row = (await soniq.backend.workers.list()).find((w) => w.id === worker.id);
    expect(row?.status).toBe("active");
  });
}
