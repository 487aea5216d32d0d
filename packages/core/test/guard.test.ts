import { describe, expect, it } from "vitest";
import { guardBackend, unwrapBackend } from "../src/app/guard.js";
import { isSoniqError } from "../src/common/errors.js";
import type { Backend } from "../src/contract/index.js";
import { caught, stubBackend } from "./support.js";

const ID = "0b6e7a3c-1f2d-4c5b-9a8e-7d6c5b4a3f21";

describe("guard/completeness", () => {
  it("lists every missing facet method in one SONIQ_INVALID_OPTIONS error", () => {
    const { backend } = stubBackend();
    const broken = {
      ...backend,
      runs: { claim: backend.runs.claim },
      wakeUps: undefined,
    } as unknown as Backend;
    const err = caught(() => guardBackend(broken));
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
    expect((err as { context: { missing: string[] } }).context.missing).toEqual([
      // runs.reportProgress is the `progress` capability: left out, it is not declared, not missing.
      "runs.settle",
      "wakeUps.subscribe",
      "wakeUps.subscribeFinished",
    ]);
  });

  it("refuses a settle without workerId and a tryAcquire without takeOver, which TypeScript lets a port drop", () => {
    const { backend } = stubBackend();
    const dropping = {
      ...backend,
      runs: { ...backend.runs, settle: async (items: readonly unknown[]) => items.map(() => true) },
      leases: {
        ...backend.leases,
        tryAcquire: async (_name: string, _holder: string, _ttlMs: number) => true,
      },
    } as unknown as Backend;
    const err = caught(() => guardBackend(dropping));
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
    expect((err as { context: { dropped: string[] } }).context.dropped).toEqual([
      "runs.settle declares 1 of its 2 parameters (drops workerId)",
      "leases.tryAcquire declares 3 of its 4 parameters (drops takeOver)",
    ]);
    // A forwarding wrapper declares no parameter and passes them all on.
    const forwarding = {
      ...backend,
      runs: {
        ...backend.runs,
        settle: (...args: unknown[]) =>
          (backend.runs.settle as (...a: unknown[]) => Promise<boolean[]>)(...args),
      },
    } as unknown as Backend;
    expect(() => guardBackend(forwarding)).not.toThrow();
  });

  it("keeps the facets, freezes the capabilities, and unwraps to the backend it guards", () => {
    const { backend } = stubBackend();
    const guarded = guardBackend(backend);
    expect(Object.keys(guarded)).toEqual(
      expect.arrayContaining(["migrations", "jobs", "runs", "deadLetters"]),
    );
    expect(Object.isFrozen(guarded.capabilities)).toBe(true);
    expect(guardBackend(guarded)).toBe(guarded);
    expect(unwrapBackend(guarded)).toBe(backend);
  });
});

describe("guard/lifecycle", () => {
  it("every call rejects with SONIQ_CLOSED once close() started; close() is memoised", async () => {
    const { backend, calls } = stubBackend();
    const guarded = guardBackend(backend);
    const closing = guarded.close();
    expect(guarded.close()).toBe(closing);
    await closing;
    expect(calls.filter((c) => c.method === "close")).toHaveLength(1);
    for (const call of [
      () => guarded.runs.settle([]),
      () => guarded.jobs.get(ID),
      () => guarded.jobs.get("not-a-uuid"),
      () => guarded.migrations.apply(),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "SONIQ_CLOSED" });
    }
  });

  it("migrations.apply runs once at a time; a success is remembered, a failure may be retried", async () => {
    let fail = true;
    const { backend, calls } = stubBackend(false, {
      "migrations.apply": async () => {
        if (fail) throw new Error("disk full");
        return { applied: ["0001"], pending: [], appliedNow: ["0001"] };
      },
    });
    const guarded = guardBackend(backend);
    await expect(guarded.migrations.apply()).rejects.toThrow("disk full");
    fail = false;
    const [a, b] = await Promise.all([guarded.migrations.apply(), guarded.migrations.apply()]);
    expect(a).toEqual({ applied: ["0001"], pending: [], appliedNow: ["0001"] });
    expect(b).toBe(a);
    expect(await guarded.migrations.apply()).toEqual({ applied: ["0001"], pending: [], appliedNow: [] });
    expect(calls.filter((c) => c.method === "migrations.apply")).toHaveLength(2);
  });
});

describe("guard/ids", () => {
  it("lower-cases ids before the backend sees them", async () => {
    const { backend, calls } = stubBackend();
    const guarded = guardBackend(backend);
    await guarded.jobs.get(ID.toUpperCase());
    await guarded.jobs.cancel(ID.toUpperCase());
    await guarded.deadLetters.replay(ID.toUpperCase(), {
      newId: ID,
      queue: null,
      priority: null,
      scheduledAt: null,
      traceId: null,
      traceContext: null,
    });
    expect(calls.map((c) => c.args[0])).toEqual([ID, ID, ID]);
  });

  it("answers not-found itself for an id that is not a UUID, without calling the backend", async () => {
    const { backend, calls } = stubBackend();
    const guarded = guardBackend(backend);
    const request = {
      newId: ID,
      queue: null,
      priority: null,
      scheduledAt: null,
      traceId: null,
      traceContext: null,
    };
    expect(await guarded.jobs.get("nope")).toBeNull();
    expect(await guarded.jobs.cancel(42 as never)).toBe(false);
    expect(await guarded.deadLetters.get(`${ID}x`)).toBeNull();
    expect(await guarded.deadLetters.replay("", request)).toBeNull();
    expect(await guarded.deadLetters.purge("x")).toBe(false);
    expect(await guarded.flows.get("nope")).toBeNull();
    expect(await guarded.flows.stepOfJob("nope")).toBeNull();
    expect(await guarded.flows.cancel("nope")).toEqual({ cancelled: false, cancelledJobIds: [] });
    expect(await guarded.flows.stepOfJob("\u0000")).toBeNull();
    expect(await guarded.flows.parents("x", "a")).toEqual({});
    expect(calls).toEqual([]);
  });
});
