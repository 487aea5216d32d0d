/** Runtime scenarios on the memory backend: cancel, shutdown, failures, leaks. */
import { execFile, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { JobAbortedError, type Logger, Soniq } from "../src/index.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { eventually, expectStaleThenReregistered, gate } from "./support.js";

const app = memoryApps();

/** A handler that waits until its signal aborts (or the gate opens), recording the abort reason. */
function waiter(started: { open: () => void }, release?: Promise<void>) {
  const seen: { reason?: unknown } = {};
  const handler = (_args: unknown, ctx: { signal: AbortSignal }) =>
    new Promise<string>((resolve) => {
      started.open();
      ctx.signal.addEventListener("abort", () => {
        seen.reason = ctx.signal.reason;
        resolve("finished after abort");
      });
      release?.then(() => resolve("released"));
    });
  return { handler, seen };
}

describe("runtime/cancel", () => {
  it("runtime/cancel-queued: a queued job is cancelled and never runs; a second cancel is false", async () => {
    const soniq = app();
    let ran = false;
    const job = soniq.job("cancel.queued", async () => {
      ran = true;
    });
    const { id } = await job.enqueue({});
    expect(await soniq.jobs.cancel(id)).toBe(true);
    expect(await soniq.jobs.cancel(id)).toBe(false);
    expect(await soniq.worker().runOnce()).toBe(0);
    expect(ran).toBe(false);
    expect((await soniq.jobs.get(id))?.status).toBe("cancelled");
  });

  it("runtime/cancel-running: the signal aborts at once and the late completion is ignored", async () => {
    const soniq = app();
    const started = gate();
    const { handler, seen } = waiter(started);
    const job = soniq.job("cancel.running", handler);
    const worker = soniq.worker();
    const cancelled: string[] = [];
    worker.on("job:cancelled", ({ job, why }) => void cancelled.push(`${job.id}:${why}`));
    await worker.start();
    const { id } = await job.enqueue({});
    await started.promise;
    expect(await soniq.jobs.cancel(id)).toBe(true);
    expect(seen.reason).toBeInstanceOf(JobAbortedError);
    expect((seen.reason as JobAbortedError).why).toBe("cancelled");
    expect(cancelled).toEqual([`${id}:cancelled`]);
    await worker.stop();
    expect((await soniq.jobs.get(id))?.status).toBe("cancelled");
  });

  it("runtime/cancel-from-another-instance: the worker notices at its next heartbeat", async () => {
    const backend = memoryBackend();
    const owner = app({}, backend);
    const other = app({ allowUnknownJobNames: true }, backend);
    const started = gate();
    const { handler, seen } = waiter(started);
    const job = owner.job("cancel.remote", handler);
    const worker = owner.worker({ heartbeatIntervalMs: 30 });
    await worker.start();
    const { id } = await job.enqueue({});
    await started.promise;
    expect(await other.jobs.cancel(id)).toBe(true);
    await eventually(() => expect((seen.reason as JobAbortedError | undefined)?.why).toBe("cancelled"));
    await worker.stop();
    expect((await owner.jobs.get(id))?.status).toBe("cancelled");
  });
});

describe("runtime/shutdown", () => {
  it("runtime/stop-waits-for-in-flight: a running job finishes; unstarted buffered jobs go back unspent", async () => {
    const soniq = app();
    const started = gate();
    const release = gate();
    const { handler } = waiter(started, release.promise);
    const job = soniq.job("stop.graceful", handler, { maxAttempts: 1 });
    const [a, b, c] = await soniq.jobs.enqueueMany([0, 1, 2].map((i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 1, batchSize: 4 });
    await worker.start();
    await started.promise;
    const stopping = worker.stop();
    expect(worker.stop()).toBe(stopping);
    release.open();
    await stopping;
    expect(worker.state).toBe("stopped");
    expect(await soniq.jobs.get(a?.id as string)).toMatchObject({ status: "done", result: "released" });
    for (const r of [b, c]) {
      // Given back with the claim's attempt refunded, so maxAttempts 1 still allows a run.
      expect(await soniq.jobs.get(r?.id as string)).toMatchObject({
        status: "queued",
        attempts: 0,
        lastError: null,
        workerId: null,
      });
    }
    expect(await soniq.worker().runOnce()).toBe(2);
  });

  it("runtime/stop-timeout-nacks: after shutdownTimeoutMs the signal aborts and the job is given back", async () => {
    const soniq = app();
    const started = gate();
    const job = soniq.job("stop.stubborn", async (_args, ctx) => {
      started.open();
      await new Promise(() => {}); // ignores its signal on purpose
      return ctx.attempt;
    });
    const { id } = await job.enqueue({});
    const worker = soniq.worker({ shutdownTimeoutMs: 30 });
    const nacked: string[] = [];
    worker.on("job:nacked", ({ job }) => void nacked.push(job.id));
    await worker.start();
    await started.promise;
    await worker.stop();
    expect(nacked).toEqual([id]);
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", attempts: 1, lastError: null });
  });

  it("runtime/stop-during-run-once: runOnce returns after its current batch once stop() is called", async () => {
    const soniq = app();
    const started = gate();
    const release = gate();
    const job = soniq.job("once.stoppable", async () => {
      started.open();
      await release.promise;
    });
    await soniq.jobs.enqueueMany(Array.from({ length: 6 }, (_, i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 2 });
    const running = worker.runOnce();
    await started.promise;
    const stopping = worker.stop();
    release.open();
    expect(await running).toBe(2);
    await stopping;
    expect(worker.state).toBe("stopped");
    expect((await soniq.jobs.stats()).queued).toBe(4);
  });

  it("runtime/run-once-is-recoverable: jobs claimed by runOnce belong to a registered worker that stale recovery covers", async () => {
    const soniq = app();
    const started = gate();
    const job = soniq.job("once.hangs", async () => {
      started.open();
      await new Promise(() => {});
    });
    const { id } = await job.enqueue({});
    const worker = soniq.worker({
      heartbeatIntervalMs: 60_000,
      staleAfterMs: 120_000,
      shutdownTimeoutMs: 10,
    });
    const running = worker.runOnce();
    await started.promise;
    expect((await soniq.jobs.get(id))?.workerId).toBe(worker.id);
    // As if the process had died: its heartbeat goes stale and a peer's sweep requeues the job.
    await eventually(async () => {
      expect((await soniq.backend.workers.recoverStale(1)).requeuedJobIds).toContain(id);
    });
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", attempts: 1 });
    await worker.stop();
    expect(await running).toBe(1);
  });

  it("runtime/close: stops workers, is memoised, and later calls reject with SONIQ_CLOSED", async () => {
    const soniq = app();
    const job = soniq.job("close.me", async () => null);
    const worker = soniq.worker();
    await worker.start();
    const closing = soniq.close();
    expect(soniq.close()).toBe(closing);
    await closing;
    expect(worker.state).toBe("stopped");
    await expect(job.enqueue({})).rejects.toMatchObject({ code: "SONIQ_CLOSED" });
    expect(() => soniq.worker()).toThrow(expect.objectContaining({ code: "SONIQ_CLOSED" }));
  });

  it("runtime/worker-states: start twice and runOnce on a started worker are refused", async () => {
    const soniq = app();
    const worker = soniq.worker();
    await worker.start();
    await expect(worker.start()).rejects.toMatchObject({ code: "SONIQ_INVALID_STATE" });
    await expect(worker.runOnce()).rejects.toMatchObject({ code: "SONIQ_INVALID_STATE" });
    await worker.stop();
    const fresh = soniq.worker();
    await fresh.stop();
    await expect(fresh.start()).rejects.toMatchObject({ code: "SONIQ_INVALID_STATE" });
  });

  it("runtime/declared-stale: a worker whose heartbeat is refused logs it and re-registers", async () => {
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (_o, msg) => void warnings.push(msg) };
    const soniq = app({ logger });
    const worker = soniq.worker({ heartbeatIntervalMs: 20 });
    await worker.start();
    // A peer with a tiny threshold declares this worker stale as soon as its heartbeat is a few ms old.
    await expectStaleThenReregistered(soniq, worker);
    expect(warnings.some((w) => w.includes("declared stale"))).toBe(true);
    await worker.stop();
  });
});

describe("runtime/failures-and-leaks", () => {
  it("runtime/write-failure-reported: a failed state write is logged and emitted; the job stays claimed", async () => {
    const failing = overriding(memoryBackend(), "runs", {
      settle: () => Promise.reject(new Error("database unavailable")),
    });
    const errors: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (_o, msg) => void errors.push(msg) };
    const soniq = app({ logger }, failing);
    const job = soniq.job("write.fails", async () => {
      throw new Error("handler failure");
    });
    const worker = soniq.worker();
    const emitted = gate<string>();
    worker.on("error", ({ during }) => emitted.open(during));
    await worker.start();
    const { id } = await job.enqueue({});
    expect(await emitted.promise).toBe("settle");
    expect(errors.some((m) => m.includes("stale-worker recovery"))).toBe(true);
    expect((await soniq.jobs.get(id))?.status).toBe("processing");
    await worker.stop();
  }, 20_000);

  it("runtime/registration-failure: start() rejects with the registration's error and keeps no wake-up subscription", async () => {
    // The subscription is made while the registration is out (they run side by side), so a failed
    // registration must take it back: a worker that never started holds nothing open.
    const base = memoryBackend();
    let subscriptions = 0;
    const backend = overriding(
      overriding(base, "workers", { register: () => Promise.reject(new Error("registration refused")) }),
      "wakeUps",
      {
        subscribe: async (listener) => {
          const unsubscribe = await base.wakeUps.subscribe(listener);
          subscriptions++;
          return async () => {
            subscriptions--;
            await unsubscribe();
          };
        },
      },
    );
    const worker = app({}, backend).worker();
    await expect(worker.start()).rejects.toThrow("registration refused");
    expect(worker.state).toBe("stopped");
    expect(subscriptions).toBe(0);
  });

  it("runtime/run-once-in-a-script: a script awaiting runOnce gets its answer even with only a timeout pending", async () => {
    const script = fileURLToPath(new URL("./runtime-child-run-once.ts", import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--conditions=source", "--import", "tsx", script],
      {
        timeout: 60_000,
      },
    );
    expect(JSON.parse(stdout)).toEqual({ ran: 2, done: 1, deadLetter: 1 });
  }, 90_000);

  it("runtime/no-leaks: a started worker holds one ref'd handle until stop(); every other timer is unref'd", async () => {
    // getActiveResourcesInfo() lists only handles that keep the event loop alive (unref'd timers are not).
    const count = () =>
      process.getActiveResourcesInfo().filter((r) => r === "Timeout" || r === "Immediate").length;
    const baseline = count();
    const soniq = new Soniq({ backend: memoryBackend() });
    const job = soniq.job("leak.check", async () => "ok", { timeoutMs: 60_000 });
    await soniq.jobs.enqueueMany([1, 2].map((i) => ({ job, args: { i } })));
    expect(await soniq.worker().runOnce()).toBe(2);
    expect(count()).toBeLessThanOrEqual(baseline); // runOnce holds nothing once it returned
    const worker = soniq.worker({ pollIntervalMs: 50, heartbeatIntervalMs: 20 });
    await worker.start();
    await soniq.jobs.enqueueMany([3, 4, 5].map((i) => ({ job, args: { i } })));
    await eventually(async () => expect((await soniq.jobs.stats()).done).toBe(5));
    // Exactly the keep-alive: heartbeat, poll, timeout and maintenance timers are unref'd.
    expect(count()).toBe(baseline + 1);
    await soniq.close();
    expect(worker.state).toBe("stopped");
    await eventually(() => expect(count()).toBeLessThanOrEqual(baseline));
  });

  it("runtime/keeps-process-alive: a worker-only process stays up while started and exits by itself after stop()", async () => {
    const child = fork(fileURLToPath(new URL("./runtime-keepalive-child.ts", import.meta.url)), [], {
      execArgv: ["--conditions=source", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const messages: string[] = [];
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.on("message", (m: string) => {
      messages.push(m);
      // The child unref'd its IPC channel: only the worker holds it open. Had it exited while idle, this
      // message would find no process and "stopped" would never come.
      if (m === "idle") child.send("stop");
    });
    expect(await exited).toBe(0);
    expect(messages).toEqual(["idle", "stopped"]);
  }, 60_000);
});

describe("runtime/claim-window", () => {
  it("runtime/claim-window-grows-for-fast-jobs: claims grow while slots starve, bounded by maxBatchSize", async () => {
    const claims: number[] = [];
    // A claim that takes a round trip (as over a network), so fast jobs leave slots idle while it is in flight.
    const backend = memoryBackend();
    const slowClaims = overriding(backend, "runs", {
      claim: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return backend.runs.claim(request);
      },
    });
    const soniq = app(
      { metrics: { recordJobStart() {}, recordJobEnd() {}, recordClaim: (e) => void claims.push(e.count) } },
      slowClaims,
    );
    const job = soniq.job("fast.noop", async () => null);
    await soniq.jobs.enqueueMany(Array.from({ length: 3000 }, (_, i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 4, maxBatchSize: 64 });
    await worker.start();
    await eventually(async () => expect((await soniq.jobs.stats()).done).toBe(3000));
    await worker.stop();
    expect(Math.max(...claims)).toBeGreaterThan(8); // beyond the initial concurrency + batchSize
    expect(Math.max(...claims)).toBeLessThanOrEqual(4 + 64);
  });

  it("runtime/claim-window-stays-small-for-slow-jobs: slow jobs are not hoarded by one worker", async () => {
    const soniq = app();
    const release = gate();
    const job = soniq.job("slow.gated", async () => {
      await release.promise;
    });
    const first = soniq.worker({ concurrency: 2 });
    const second = soniq.worker({ concurrency: 2 });
    await first.start();
    await soniq.jobs.enqueueMany(Array.from({ length: 8 }, (_, i) => ({ job, args: { i } })));
    await eventually(() => expect(first.running).toBe(2));
    await second.start();
    await eventually(() => expect(second.running).toBe(2));
    release.open();
    await eventually(async () => expect((await soniq.jobs.stats()).done).toBe(8));
    await Promise.all([first.stop(), second.stop()]);
  });
});
