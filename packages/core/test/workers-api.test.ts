/** `soniq.workers.list()` and `soniq.migrations.status()`: the app API the CLI and the dashboard read. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../testkit/src/clock.js";
import type { WorkerRegistration } from "../src/contract/index.js";
import { isSoniqError, type Soniq, type WorkerView } from "../src/index.js";
import { workerCounts } from "../src/ops.js";
import { DEFAULT_STALE_AFTER_MS } from "../src/worker/liveness.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";

const app = memoryApps();

const registration = (queues: string[] = []): WorkerRegistration => ({
  id: randomUUID(),
  hostname: "host-1",
  pid: 42,
  queues,
  concurrency: 4,
  version: "1.2.3",
  metadata: null,
});

/** A Soniq whose backend and app share one manual clock, so heartbeats age without waiting. */
function clockedApp(): { soniq: Soniq; clock: ReturnType<typeof manualClock> } {
  const clock = manualClock(new Date("2026-12-01T12:00:00Z"));
  return { soniq: app({ clock }, memoryBackend({ now: clock.now })), clock };
}

async function expectInvalid(p: Promise<unknown>, field: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT"), String(err)).toBe(true);
  expect((err as { context: { field: string } }).context.field).toBe(field);
}

describe("soniq.workers.list()", () => {
  it("workers/state: live within staleAfterMs, stale when silent longer, stopped when marked", async () => {
    const { soniq, clock } = clockedApp();
    const quiet = registration(["emails"]);
    const busy = registration();
    const done = registration();
    for (const w of [quiet, busy, done]) await soniq.backend.workers.register(w);
    await soniq.backend.workers.stop(done.id);
    await clock.advance(DEFAULT_STALE_AFTER_MS);
    await soniq.backend.workers.heartbeat(busy.id, null);
    const atThreshold = await soniq.workers.list();
    expect(atThreshold.map((w) => [w.id, w.state])).toEqual([
      [busy.id, "live"],
      [quiet.id, "live"],
      [done.id, "stopped"],
    ]);
    expect(atThreshold[1]).toMatchObject({
      hostname: "host-1",
      pid: 42,
      queues: ["emails"],
      concurrency: 4,
      status: "active",
      version: "1.2.3",
      heartbeatAgeMs: DEFAULT_STALE_AFTER_MS,
    });
    await clock.advance(1);
    const past = await soniq.workers.list();
    expect(past.map((w) => [w.id, w.state])).toEqual([
      [busy.id, "live"],
      [quiet.id, "stale"],
      [done.id, "stopped"],
    ]);
    // A tighter threshold is the caller's to pass; the rule stays the same.
    const tight = await soniq.workers.list({ staleAfterMs: 1 });
    expect(tight.map((w) => w.state)).toEqual(["live", "stale", "stopped"]);
    expect((await soniq.workers.list({ staleAfterMs: 1_000_000 })).map((w) => w.state)).toEqual([
      "live",
      "live",
      "stopped",
    ]);
  });

  it("workers/job-names: each worker lists the job names it registered, sorted; a started worker is live", async () => {
    const soniq = app();
    soniq.job("b.second", async () => null);
    soniq.job("a.first", async () => null);
    const worker = soniq.worker({ queues: ["default"], pollIntervalMs: 50 });
    await worker.start();
    const [running] = await soniq.workers.list();
    expect(running).toMatchObject({ state: "live", status: "active", jobNames: ["a.first", "b.second"] });
    await worker.stop();
    const [stopped] = await soniq.workers.list();
    expect(stopped).toMatchObject({ id: running?.id, state: "stopped", jobNames: ["a.first", "b.second"] });
  });

  it("workers/explain-agrees: explain counts as serving exactly the workers list() calls live", async () => {
    let shiftMs = -(DEFAULT_STALE_AFTER_MS + 1_000); // the backend writes heartbeats this far in the past
    const soniq = app({ allowUnknownJobNames: true }, memoryBackend({ now: () => Date.now() + shiftMs }));
    const w = registration();
    await soniq.backend.workers.register(w);
    await soniq.backend.workers.registerTaskNames(w.id, [{ name: "x.job", version: null }]);
    const job = await soniq.jobs.enqueue("x.job", {}, { delayMs: -shiftMs });
    const codes = async () => (await soniq.jobs.explain(job.id)).reasons.map((r) => r.code);
    expect((await soniq.workers.list()).map((v) => v.state)).toEqual(["stale"]);
    expect(await codes()).toEqual(expect.arrayContaining(["no_worker_for_queue", "no_handler_for_job"]));
    shiftMs = 0;
    await soniq.backend.workers.heartbeat(w.id, null);
    expect((await soniq.workers.list()).map((v) => v.state)).toEqual(["live"]);
    const now = await codes();
    expect(now).not.toContain("no_worker_for_queue");
    expect(now).not.toContain("no_handler_for_job");
  });

  it("workers/counts: the one summary line the CLI and the dashboard print", () => {
    const of = (...states: WorkerView["state"][]) => workerCounts(states.map((state) => ({ state })));
    expect(of()).toBe("0 live");
    expect(of("live", "live")).toBe("2 live");
    expect(of("stopped", "live", "stale", "stopped")).toBe("1 live, 1 stale, 2 stopped");
    expect(of("stopped")).toBe("0 live, 1 stopped");
  });

  it("workers/bad-input: a bad staleAfterMs or an unknown key is SONIQ_INVALID_ARGUMENT", async () => {
    const soniq = app();
    for (const bad of [0, -5, 1.5, "10", Number.NaN]) {
      await expectInvalid(
        soniq.workers.list({ staleAfterMs: bad as number }),
        "workers.list(options).staleAfterMs",
      );
    }
    await expectInvalid(
      soniq.workers.list({ stale: 5 } as unknown as { staleAfterMs: number }),
      "workers.list(options).stale",
    );
    await expectInvalid(soniq.workers.list("fast" as unknown as undefined), "workers.list(options)");
  });
});

describe("soniq.migrations.status()", () => {
  it("migrations/status: the backend's applied and pending names; bad input and a closed app refuse", async () => {
    const stored = { applied: ["0001_jobs"], pending: ["0002_queues"] };
    const backend = overriding(memoryBackend(), "migrations", { status: async () => stored });
    const soniq = app({}, backend);
    expect(await soniq.migrations.status()).toEqual(stored);
    await expectInvalid(
      (soniq.migrations.status as (x: unknown) => Promise<unknown>)("now"),
      "migrations.status()",
    );
    await soniq.close();
    const err = await soniq.migrations.status().catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_CLOSED")).toBe(true);
  });
});
