/** `soniq.jobs.waitFor()` and `handle.result()` on the memory backend (the SQL backends: e2e results-*.test.ts). */
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import type { FinishedListener, JobListQuery } from "../src/contract/index.js";
import { isSoniqError, type JobOutcome, PermanentError } from "../src/index.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { gate, rejection } from "./support.js";

const app = memoryApps();

describe("results/wait-for", () => {
  it("results/done: handle.result() resolves with the handler's result, typed by the job", async () => {
    const soniq = app();
    const add = soniq.job("results.add", async (args: { a: number; b: number }) => ({
      sum: args.a + args.b,
    }));
    const worker = soniq.worker({ pollIntervalMs: 10 });
    await worker.start();
    const handle = await add.enqueue({ a: 2, b: 3 });
    const outcome = await handle.result({ timeoutMs: 5000 });
    expectTypeOf(outcome).toEqualTypeOf<JobOutcome<{ sum: number }>>();
    expect(outcome).toEqual({ status: "done", result: { sum: 5 } });
    // Already finished: answered from the row at once.
    expect(await soniq.jobs.waitFor(handle.id)).toEqual({ status: "done", result: { sum: 5 } });
    await worker.stop();
  });

  it("results/handle-still-compares-as-enqueue-result: result() is not an own enumerable key", async () => {
    const soniq = app();
    soniq.job("results.plain", async () => 1);
    const handle = await soniq.jobs.enqueue("results.plain", {});
    expect(handle).toEqual({ id: handle.id, deduplicated: false });
    expect(JSON.parse(JSON.stringify(handle))).toEqual({ id: handle.id, deduplicated: false });
    expect({ ...handle }).toEqual({ id: handle.id, deduplicated: false });
    expect(Object.keys(handle)).toEqual(["id", "deduplicated"]);
    expect(typeof handle.result).toBe("function");
    const [many] = await soniq.jobs.enqueueMany([{ job: "results.plain", args: {} }]);
    expect(typeof many?.result).toBe("function");
  });

  it("results/handle-detached: `result` taken off the handle still waits for that job", async () => {
    const soniq = app();
    soniq.job("results.detached", async (args: { n: number }) => args.n * 2);
    const { id, result } = await soniq.jobs.enqueue("results.detached", { n: 21 });
    const [other] = await soniq.jobs.enqueueMany([{ job: "results.detached", args: { n: 1 } }]);
    const worker = soniq.worker();
    await worker.start();
    try {
      await expect(result({ timeoutMs: 10_000 })).resolves.toEqual({ status: "done", result: 42 });
      const detached = other?.result;
      await expect(detached?.({ timeoutMs: 10_000 })).resolves.toEqual({ status: "done", result: 2 });
      expect((await soniq.jobs.get(id))?.status).toBe("done");
    } finally {
      await worker.stop();
    }
  });

  it("results/dead-letter: a permanent failure resolves with the reason and the last error", async () => {
    const soniq = app();
    const fail = soniq.job("results.fail", async () => {
      throw new PermanentError("card declined");
    });
    const handle = await fail.enqueue({});
    const waiting = handle.result({ timeoutMs: 5000 });
    await soniq.worker().runOnce();
    const outcome = await waiting;
    expect(outcome.status).toBe("dead_letter");
    if (outcome.status !== "dead_letter") return;
    expect(outcome.reason).toBe("permanent_failure");
    expect(outcome.lastError).toContain("card declined");
  });

  it("results/cancelled: cancelling a queued job ends its waiters with cancelled", async () => {
    const soniq = app();
    soniq.job("results.never", async () => 1);
    const { id } = await soniq.jobs.enqueue("results.never", {});
    const waiting = soniq.jobs.waitFor(id, { timeoutMs: 5000 });
    expect(await soniq.jobs.cancel(id)).toBe(true);
    expect(await waiting).toEqual({ status: "cancelled" });
  });

  it("results/timeout: rejects SONIQ_TIMEOUT and leaves the job alone", async () => {
    const soniq = app();
    soniq.job("results.slow", async () => 1);
    const { id } = await soniq.jobs.enqueue("results.slow", {});
    const started = performance.now();
    const err = await rejection(soniq.jobs.waitFor(id, { timeoutMs: 50 }));
    expect(isSoniqError(err, "SONIQ_TIMEOUT")).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
    expect((err as { context: Record<string, unknown> }).context).toEqual({ id, timeoutMs: 50 });
    expect((await soniq.jobs.get(id))?.status).toBe("queued");
  });

  it("results/signal: an abort rejects with the signal's reason; an aborted signal rejects at once", async () => {
    const soniq = app();
    soniq.job("results.abort", async () => 1);
    const { id } = await soniq.jobs.enqueue("results.abort", {});
    const controller = new AbortController();
    const waiting = soniq.jobs.waitFor(id, { signal: controller.signal });
    const reason = new Error("user went away");
    controller.abort(reason);
    expect(await rejection(waiting)).toBe(reason);
    expect(await rejection(soniq.jobs.waitFor(id, { signal: AbortSignal.abort("early") }))).toBe("early");
  });

  it("results/unknown-id: an id in neither table rejects SONIQ_JOB_NOT_FOUND with what to check", async () => {
    const soniq = app();
    const missing = "0b6e7a3c-1f2d-4c5b-9a8e-7d6c5b4a3f21";
    const err = await rejection(soniq.jobs.waitFor(missing, { timeoutMs: 5000 }));
    expect(isSoniqError(err, "SONIQ_JOB_NOT_FOUND")).toBe(true);
    expect((err as Error).message).toContain(missing);
    expect(isSoniqError(await rejection(soniq.jobs.waitFor("not-a-uuid")), "SONIQ_JOB_NOT_FOUND")).toBe(true);
  });

  it("results/step-finished-between-reads: a flow step released, run and finished while the wait read it resolves with its outcome", async () => {
    // The wait reads the job (no row: not released yet), then the dead letters, then the step. Here the step
    // was released, ran and finished between the first read and the last: its job row is there by then.
    const base = memoryBackend();
    let hideOnce = "";
    const backend = overriding(base, "jobs", {
      get: async (id: string) => {
        if (id === hideOnce) {
          hideOnce = "";
          return null;
        }
        return base.jobs.get(id);
      },
      list: async (query: JobListQuery) => {
        const rows = await base.jobs.list(query);
        if (!rows.some((row) => row.id === hideOnce)) return rows;
        hideOnce = "";
        return rows.filter((row) => row.id !== jobsA);
      },
    });
    let jobsA = "";
    const soniq = app({}, backend);
    soniq.job("results.step", async () => "stepped");
    const { jobs } = await soniq.flows.start({ steps: { a: { job: "results.step" } } });
    await soniq.worker().runOnce();
    jobsA = jobs.a as string;
    hideOnce = jobsA;
    expect(await soniq.jobs.waitFor(jobs.a as string, { timeoutMs: 5000 })).toEqual({
      status: "done",
      result: "stepped",
    });
    expect(hideOnce).toBe("");
  });

  it("results/bad-options: typed errors, nothing waited for", async () => {
    const soniq = app();
    for (const options of [{ timeoutMs: -1 }, { timeoutMs: Number.NaN }, { signal: {} }, { timeout: 5 }, 5]) {
      const err = await rejection(
        soniq.jobs.waitFor("0b6e7a3c-1f2d-4c5b-9a8e-7d6c5b4a3f21", options as never),
      );
      expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    }
    expect(isSoniqError(await rejection(soniq.jobs.waitFor(5 as never)), "SONIQ_INVALID_ARGUMENT")).toBe(
      true,
    );
  });

  it("results/close: close() rejects pending waiters with SONIQ_CLOSED", async () => {
    const soniq = app();
    soniq.job("results.pending", async () => 1);
    const { id } = await soniq.jobs.enqueue("results.pending", {});
    const waiting = soniq.jobs.waitFor(id);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await soniq.close();
    expect(isSoniqError(await rejection(waiting), "SONIQ_CLOSED")).toBe(true);
    expect(isSoniqError(await rejection(soniq.jobs.waitFor(id)), "SONIQ_CLOSED")).toBe(true);
  });

  it("results/first-reads-batched: 200 waiters arriving together make a few reads by id, not 200", async () => {
    const base = memoryBackend();
    let gets = 0;
    const lists: number[] = [];
    const counted = overriding(base, "jobs", {
      get: async (id: string) => {
        gets++;
        return base.jobs.get(id);
      },
      list: async (query: JobListQuery) => {
        lists.push(query.ids?.length ?? 0);
        return base.jobs.list(query);
      },
    });
    const soniq = app({}, counted);
    soniq.job("results.many", async (args: { i: number }) => args.i);
    const handles = await Promise.all(
      Array.from({ length: 200 }, (_, i) => soniq.jobs.enqueue("results.many", { i })),
    );
    const outcomes = Promise.all(handles.map((h) => h.result({ timeoutMs: 10_000 })));
    // Every waiter's first read has answered "pending" once two lists of 100 ids ran.
    await vi.waitFor(() => expect(lists.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(200));
    expect(gets).toBe(0);
    expect(lists).toEqual([100, 100]);
    await soniq.worker({ concurrency: 50 }).runOnce();
    expect((await outcomes).map((o) => (o.status === "done" ? o.result : null))).toEqual(
      Array.from({ length: 200 }, (_, i) => i),
    );
  });

  it("results/one-subscription: 200 waiters share one finished-job subscription, dropped after the last", async () => {
    const backend = memoryBackend();
    let subscribed = 0;
    let unsubscribed = 0;
    const counted = overriding(backend, "wakeUps", {
      subscribeFinished: async (listener: FinishedListener) => {
        subscribed++;
        const unsubscribe = await backend.wakeUps.subscribeFinished(listener);
        return async () => {
          unsubscribed++;
          await unsubscribe();
        };
      },
    });
    const soniq = app({}, counted);
    const release = gate();
    soniq.job("results.many", async (args: { i: number }) => {
      await release.promise;
      return args.i;
    });
    const handles = await Promise.all(
      Array.from({ length: 200 }, (_, i) => soniq.jobs.enqueue("results.many", { i })),
    );
    const outcomes = Promise.all(handles.map((h) => h.result({ timeoutMs: 10_000 })));
    const worker = soniq.worker({ concurrency: 50, pollIntervalMs: 10 });
    await worker.start();
    release.open();
    expect((await outcomes).map((o) => (o.status === "done" ? o.result : null))).toEqual(
      Array.from({ length: 200 }, (_, i) => i),
    );
    await worker.stop();
    expect(subscribed).toBe(1);
    expect(unsubscribed).toBe(1);
  });
});
