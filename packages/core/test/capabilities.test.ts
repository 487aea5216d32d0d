/**
 * Capabilities: a backend with only the core facets runs jobs, retries and dead letters; the app refuses what it
 * does not declare with `SONIQ_UNSUPPORTED` naming the capability (at `setup()` for declared schedules, at the
 * call otherwise), and the guard checks only the facets a backend declares.
 */
import { describe, expect, it } from "vitest";
import { withoutCapabilities } from "../../testkit/src/without-capabilities.js";
import { guardBackend } from "../src/app/guard.js";
import { BACKEND_CAPABILITIES } from "../src/contract/index.js";
import { isSoniqError, PermanentError } from "../src/index.js";
import { memoryApps, memoryBackend } from "./memory.js";

const app = memoryApps();

async function refusal(promise: Promise<unknown>): Promise<{ code: string; capability: unknown }> {
  const err = await promise.then(
    () => new Error("expected a rejection"),
    (e: unknown) => e,
  );
  if (!isSoniqError(err)) throw err;
  return { code: err.code, capability: err.context.capability };
}

const unsupported = (capability: string) => ({ code: "SONIQ_UNSUPPORTED", capability });

describe("core/capabilities", () => {
  it("capabilities/declared: the guard reads what a backend declares; the three facets it lacks are stubs", () => {
    const full = guardBackend(memoryBackend());
    expect(BACKEND_CAPABILITIES.filter((c) => full.supports(c))).toEqual([...BACKEND_CAPABILITIES]);
    const bare = guardBackend(withoutCapabilities(memoryBackend()));
    expect(BACKEND_CAPABILITIES.filter((c) => bare.supports(c))).toEqual([]);
    const some = guardBackend(withoutCapabilities(memoryBackend(), ["webhooks", "progress"]));
    expect(BACKEND_CAPABILITIES.filter((c) => !some.supports(c))).toEqual(["webhooks", "progress"]);
  });

  it("capabilities/declared-facet-complete: a declared facet must have every method; an undeclared one is not checked", () => {
    const base = memoryBackend();
    const partial = { ...withoutCapabilities(base), flows: { start: base.flows.start } };
    let err: unknown;
    try {
      guardBackend(partial as never);
    } catch (e) {
      err = e;
    }
    expect(isSoniqError(err) && err.code).toBe("SONIQ_INVALID_OPTIONS");
    expect(String((err as Error).message)).toContain("flows.get");
    expect(String((err as Error).message)).not.toContain("webhooks.");
  });

  it("capabilities/core-only-runs-jobs: enqueue, run, retry, dead-letter, replay and explain work without any capability", async () => {
    const soniq = app({}, withoutCapabilities(memoryBackend()));
    await soniq.setup();
    const ok = soniq.job("caps.ok", async (args: { n: number }) => args.n * 2);
    const bad = soniq.job(
      "caps.bad",
      async () => {
        throw new PermanentError("no");
      },
      { maxAttempts: 1 },
    );
    const a = await ok.enqueue({ n: 21 });
    const b = await bad.enqueue({});
    expect(await soniq.worker().runOnce()).toBe(2);
    expect((await soniq.jobs.get(a.id))?.result).toBe(42);
    expect((await soniq.deadLetters.get(b.id))?.deadLetterReason).toBe("permanent_failure");
    expect((await soniq.jobs.explain(b.id)).verdict).toBe("dead_lettered");
    const replayed = await soniq.deadLetters.replay(b.id, { actor: "ops" });
    expect(replayed).not.toBeNull();
    expect((await soniq.jobs.explain(replayed as string)).status).toBe("queued");
    expect(await soniq.jobs.cancel(replayed as string)).toBe(true);
  });

  it("capabilities/refused-at-the-call: each feature the backend lacks is SONIQ_UNSUPPORTED naming its capability", async () => {
    const soniq = app({ webhooks: { allowPrivateNetworks: true } }, withoutCapabilities(memoryBackend()));
    await soniq.setup();
    soniq.job("caps.step", async () => 1);
    expect(await refusal(soniq.flows.start({ steps: { a: { job: "caps.step" } } }))).toEqual(
      unsupported("flows"),
    );
    expect(await refusal(soniq.flows.list())).toEqual(unsupported("flows"));
    expect(
      await refusal(
        soniq.webhooks.register({
          url: "http://127.0.0.1:9/h",
          events: ["job.completed"],
          secret: "whsec_unit_0123456789",
        }),
      ),
    ).toEqual(unsupported("webhooks"));
    expect(await refusal(soniq.queues.pause("default"))).toEqual(unsupported("queues"));
    expect(await refusal(soniq.audit.list())).toEqual(unsupported("audit"));
    expect(await refusal(soniq.metrics.series())).toEqual(unsupported("metrics"));
    expect(await refusal(soniq.schedules.list())).toEqual(unsupported("schedules"));
  });

  it("capabilities/schedules-refused-at-setup: a declared schedule on a backend without schedules fails setup()", async () => {
    const soniq = app({}, withoutCapabilities(memoryBackend(), ["schedules"]));
    const report = soniq.job("caps.report", async () => null);
    soniq.schedules.declare(report, { every: "1h" });
    expect(await refusal(soniq.setup())).toEqual(unsupported("schedules"));
  });

  it("capabilities/progress-refused-in-the-handler: ctx.progress() throws SONIQ_UNSUPPORTED without the progress capability", async () => {
    const soniq = app({}, withoutCapabilities(memoryBackend(), ["progress"]));
    await soniq.setup();
    const seen: unknown[] = [];
    const job = soniq.job("caps.progress", async (_args, ctx) => {
      try {
        ctx.progress(1);
      } catch (err) {
        seen.push(isSoniqError(err) ? [err.code, err.context.capability] : err);
      }
      return "done";
    });
    const { id } = await job.enqueue({});
    await soniq.worker().runOnce();
    expect(seen).toEqual([["SONIQ_UNSUPPORTED", "progress"]]);
    expect((await soniq.jobs.get(id))?.status).toBe("done");
  });
});
