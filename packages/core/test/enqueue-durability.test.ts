/**
 * `durability` on enqueue and enqueueMany, and the instance's `enqueueDurability`: what core hands the backend
 * (`{ durability: "async" }` only outside a caller's transaction), and the typed errors for a bad value or
 * `"async"` with `tx`, which write nothing.
 */
import { describe, expect, it } from "vitest";
import { isSoniqError, type SoniqError } from "../src/common/errors.js";
import type { Backend, EnqueueOptions } from "../src/contract/index.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { rejection } from "./support.js";

const app = memoryApps();

/** A memory backend that records the options of every enqueue call, and claims to take a caller's `tx`. */
function recording() {
  const inner = memoryBackend();
  const seen: EnqueueOptions<unknown>[] = [];
  const backend: Backend<unknown> = {
    ...inner,
    capabilities: { ...inner.capabilities, transactionalEnqueue: true },
    jobs: {
      ...inner.jobs,
      enqueue: (job, options) => {
        seen.push(options);
        const { tx: _tx, ...rest } = options;
        return inner.jobs.enqueue(job, rest);
      },
      enqueueMany: (jobs, options) => {
        seen.push(options);
        const { tx: _tx, ...rest } = options;
        return inner.jobs.enqueueMany(jobs, rest);
      },
    },
  };
  return { backend, seen };
}

/** The SoniqError a call rejected with. */
async function rejected(promise: Promise<unknown>): Promise<SoniqError> {
  const err = await rejection(promise);
  if (!isSoniqError(err)) throw err;
  return err;
}

describe("enqueue durability", () => {
  it("durable by default; durability: async per call, for one job and for a batch", async () => {
    const { backend, seen } = recording();
    const soniq = app({}, backend);
    const ping = soniq.job("ping", async () => 1);
    await ping.enqueue({});
    await ping.enqueue({}, { durability: "async" });
    await soniq.jobs.enqueue("ping", {}, { durability: "durable" });
    await soniq.jobs.enqueueMany([{ job: ping, args: {} }], { durability: "async" });
    await soniq.jobs.enqueueMany([{ job: ping, args: {} }]);
    expect(seen.map((o) => o.durability ?? "durable")).toEqual([
      "durable",
      "async",
      "durable",
      "async",
      "durable",
    ]);
    expect(await soniq.jobs.stats()).toMatchObject({ queued: 5 });
  });

  it("enqueueDurability: async is the instance's default; a call's durability: durable overrides it", async () => {
    const { backend, seen } = recording();
    const soniq = app({ enqueueDurability: "async" }, backend);
    const ping = soniq.job("ping", async () => 1);
    await ping.enqueue({});
    await ping.enqueue({}, { durability: "durable" });
    await soniq.jobs.enqueueMany([{ job: ping, args: {} }]);
    expect(seen.map((o) => o.durability ?? "durable")).toEqual(["async", "durable", "async"]);
  });

  it("inside a caller's transaction the default does not apply: its commit decides", async () => {
    const { backend, seen } = recording();
    const soniq = app({ enqueueDurability: "async" }, backend);
    const ping = soniq.job("ping", async () => 1);
    const tx = { a: "transaction" };
    await ping.enqueue({}, { tx });
    await soniq.jobs.enqueueMany([{ job: ping, args: {} }], { tx });
    expect(seen).toEqual([{ tx }, { tx }]);
  });

  it('refuses a bad value and "async" with tx, and writes nothing', async () => {
    const { backend, seen } = recording();
    const soniq = app({}, backend);
    const ping = soniq.job("ping", async () => 1);
    const bad = { durability: "fast" } as unknown as { durability: "async" };
    const tx = { a: "transaction" };
    const errors = [
      await rejected(ping.enqueue({}, bad)),
      await rejected(ping.enqueue({}, { tx, durability: "async" })),
      await rejected(soniq.jobs.enqueueMany([{ job: ping, args: {} }], bad)),
      await rejected(soniq.jobs.enqueueMany([{ job: ping, args: {} }], { tx, durability: "async" })),
    ];
    expect(errors.map((e) => e.code)).toEqual(Array(4).fill("SONIQ_INVALID_OPTIONS"));
    expect(errors[0]?.message).toMatch(/durability must be "durable" or "async"/);
    expect(errors[1]?.message).toMatch(/does not apply inside your transaction/);
    expect(errors[3]?.message).toMatch(/does not apply inside your transaction/);
    // On an item it is refused too: the batch is one commit.
    const item = await rejected(
      soniq.jobs.enqueueMany([
        { job: ping, args: {}, options: { durability: "async" } as unknown as Record<string, never> },
      ]),
    );
    expect(item.code).toBe("SONIQ_INVALID_ARGUMENT");
    expect(item.message).toMatch(/durability is not an item option/);
    expect(() => app({ enqueueDurability: "never" as unknown as "async" }, memoryBackend())).toThrow(
      /enqueueDurability must be "durable" or "async"/,
    );
    expect(seen).toEqual([]);
    expect(await soniq.jobs.stats()).toMatchObject({ total: 0 });
  });
});
