/** soniq.flows on the memory backend: what core decides (validation, limits, lists, waits, cancels, rules). */
import { describe, expect, it } from "vitest";
import { isSoniqError, type SoniqError } from "../src/common/errors.js";
import { dependentEffect, flowStateOf, type StoredFlow } from "../src/flows/rules.js";
import { MAX_FLOW_STEPS, MAX_STEP_PARENTS } from "../src/flows/steps.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();

async function rejection(p: Promise<unknown>): Promise<SoniqError> {
  try {
    await p;
  } catch (err) {
    if (isSoniqError(err)) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

describe("flows", () => {
  it("flows/limits: more than 10,000 steps, or parents of one step, is SONIQ_INVALID_FLOW; nothing written", async () => {
    const soniq = app();
    soniq.job("t.step", async () => null);
    const many: Record<string, { job: string; dependsOn?: string[] }> = {};
    for (let i = 0; i <= MAX_FLOW_STEPS; i++) many[`s${i}`] = { job: "t.step" };
    const tooMany = await rejection(soniq.flows.start({ steps: many }));
    expect(tooMany).toMatchObject({ code: "SONIQ_INVALID_FLOW", context: { field: "steps" } });
    const parents = Array.from({ length: MAX_STEP_PARENTS + 1 }, (_, i) => `p${i}`);
    const wide = await rejection(
      soniq.flows.start({ steps: { child: { job: "t.step", dependsOn: parents } } }),
    );
    expect(wide).toMatchObject({
      code: "SONIQ_INVALID_FLOW",
      context: { field: "steps.child.dependsOn", ref: "child" },
    });
    expect(await soniq.flows.list()).toEqual([]);
    expect((await soniq.jobs.stats()).total).toBe(0);
  });

  it("flows/refused-options: dedupKey, unique, an unknown step key, a bad policy, an unknown job, a bad name", async () => {
    const soniq = app();
    soniq.job("t.step", async () => null);
    const cases: [unknown, string][] = [
      [{ steps: { a: { job: "t.step", options: { dedupKey: "k" } } } }, "steps.a.options.dedupKey"],
      [{ steps: { a: { job: "t.step", options: { unique: true } } } }, "steps.a.options.unique"],
      [{ steps: { a: { job: "t.step", after: ["x"] } } }, "steps.a.after"],
      [{ steps: { a: { job: "t.step", onParentFailure: "retry" } } }, "steps.a.onParentFailure"],
      [{ steps: { a: { job: "t.nope" } } }, "steps.a.job"],
      [{ steps: { a: { job: "t.step", options: { priority: "high" } } } }, "steps.a.options"],
      [{ name: "Bad Name", steps: { a: { job: "t.step" } } }, "name"],
    ];
    for (const [definition, field] of cases) {
      const err = await rejection(soniq.flows.start(definition as never));
      expect(err.code, field).toBe("SONIQ_INVALID_FLOW");
      expect(err.context.field, field).toBe(field);
    }
    expect(await soniq.flows.list()).toEqual([]);
  });

  it("flows/tx-unsupported: the memory backend refuses tx like enqueue does", async () => {
    const soniq = app();
    soniq.job("t.step", async () => null);
    const err = await rejection(soniq.flows.start({ steps: { a: { job: "t.step" } } }, { tx: {} as never }));
    expect(err.code).toBe("SONIQ_TRANSACTION_UNSUPPORTED");
  });

  it("flows/list-and-paging: newest first, by state and name, paged with position", async () => {
    const soniq = app();
    soniq.job("t.step", async () => null);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await soniq.flows.start({ name: i % 2 ? "t.odd" : "t.even", steps: { a: { job: "t.step" } } })).id,
      );
    }
    const all = await soniq.flows.list();
    expect(all.map((f) => f.id)).toEqual([...ids].reverse());
    expect((await soniq.flows.list({ name: "t.odd" })).map((f) => f.id)).toEqual([ids[3], ids[1]]);
    const page1 = await soniq.flows.list({ limit: 2 });
    const page2 = await soniq.flows.list({ limit: 2, position: page1[1] });
    expect(page2.map((f) => f.id)).toEqual([ids[2], ids[1]]);
    await soniq.worker().runOnce();
    expect((await soniq.flows.list({ state: "succeeded" })).length).toBe(5);
    expect(await soniq.flows.list({ state: "running" })).toEqual([]);
    await expect(soniq.flows.list({ state: "done" as never })).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
  });

  it("flows/wait-for: resolves with the finished flow, SONIQ_TIMEOUT while open, SONIQ_INVALID_ARGUMENT when unknown", async () => {
    const soniq = app();
    soniq.job("t.step", async () => null);
    const { id } = await soniq.flows.start({ steps: { a: { job: "t.step" } } });
    await expect(soniq.flows.waitFor(id, { timeoutMs: 30, pollIntervalMs: 5 })).rejects.toMatchObject({
      code: "SONIQ_TIMEOUT",
    });
    const waiting = soniq.flows.waitFor(id, { timeoutMs: 5000, pollIntervalMs: 5 });
    await soniq.worker().runOnce();
    expect((await waiting).state).toBe("succeeded");
    await expect(soniq.flows.waitFor("0190a0a0-0000-7000-8000-000000000000")).rejects.toMatchObject({
      code: "SONIQ_INVALID_ARGUMENT",
    });
  });

  it("flows/cancel-aborts-running: flows.cancel aborts a running step's signal through the job cancel path", async () => {
    const soniq = app();
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let reason: unknown = null;
    soniq.job("t.long", async (_a, ctx) => {
      started();
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
      reason = ctx.signal.reason;
    });
    soniq.job("t.after", async () => null);
    const flow = await soniq.flows.start({
      steps: { long: { job: "t.long" }, after: { job: "t.after", dependsOn: ["long"] } },
    });
    const worker = soniq.worker({ pollIntervalMs: 10 });
    await worker.start();
    await running;
    expect((await soniq.flows.get(flow.id))?.steps[0]?.state).toBe("processing");
    expect(await soniq.flows.cancel(flow.id, { actor: "ops" })).toBe(true);
    await worker.stop();
    expect(isSoniqError(reason, "SONIQ_JOB_ABORTED")).toBe(true);
    const after = await soniq.flows.get(flow.id);
    expect(after?.state).toBe("cancelled");
    expect(after?.steps.map((s) => [s.ref, s.state, s.reason])).toEqual([
      ["long", "cancelled", "flow_cancelled"],
      ["after", "cancelled", "flow_cancelled"],
    ]);
  });

  it("flows/rules: a dependent's reaction to each parent outcome under each policy, and the flow's state", () => {
    expect(dependentEffect("hold", "done", true)).toBe("settle");
    expect(dependentEffect("hold", "dead_lettered", true)).toBe("hold");
    expect(dependentEffect("hold", "cancelled", true)).toBe("cancel");
    expect(dependentEffect("hold", "purged", true)).toBe("cancel");
    expect(dependentEffect("cancel", "dead_lettered", true)).toBe("cancel");
    expect(dependentEffect("cancel", "purged", true)).toBe("none");
    expect(dependentEffect("run", "dead_lettered", true)).toBe("settle");
    expect(dependentEffect("run", "cancelled", true)).toBe("settle");
    // A "run" dependent counted a dead-lettered parent once; its replay's done must not count it again.
    expect(dependentEffect("run", "done", false)).toBe("none");
    expect(dependentEffect("hold", "done", false)).toBe("settle");
    const flow = (over: Partial<StoredFlow>): StoredFlow => ({
      id: "f",
      name: null,
      state: "running",
      createdBy: "api",
      stepsTotal: 3,
      stepsOpen: 0,
      stepsFailed: 0,
      stepsHeld: 0,
      createdAt: new Date(),
      finishedAt: null,
      ...over,
    });
    expect(flowStateOf(flow({}))).toBe("succeeded");
    expect(flowStateOf(flow({ stepsFailed: 1 }))).toBe("failed");
    expect(flowStateOf(flow({ stepsOpen: 2, stepsHeld: 1 }))).toBe("held");
    expect(flowStateOf(flow({ stepsOpen: 2 }))).toBe("running");
    expect(flowStateOf(flow({ state: "cancelled", stepsOpen: 2 }))).toBe("cancelled");
  });

  it("flows/replay-rejoins-once: replaying a step's dead letter twice rejoins once; the second job runs outside the flow", async () => {
    const soniq = app();
    let fail = true;
    soniq.job(
      "t.flaky",
      async () => {
        if (fail) throw new Error("no");
        return 1;
      },
      { maxAttempts: 1 },
    );
    soniq.job("t.next", async () => null);
    const flow = await soniq.flows.start({
      steps: { a: { job: "t.flaky" }, b: { job: "t.next", dependsOn: ["a"], onParentFailure: "run" } },
    });
    await soniq.worker().runOnce();
    expect((await soniq.flows.get(flow.id))?.state).toBe("failed");
    fail = false;
    const first = (await soniq.deadLetters.replay(flow.jobs.a as string)) as string;
    const second = (await soniq.deadLetters.replay(flow.jobs.a as string)) as string;
    expect((await soniq.jobs.get(first))?.flowId).toBe(flow.id);
    expect((await soniq.jobs.get(second))?.flowId).toBeNull();
    expect((await soniq.flows.get(flow.id))?.state).toBe("running");
    await soniq.worker().runOnce();
    const after = await soniq.flows.get(flow.id);
    // b ran once (released by the "run" policy at the dead letter), a is done through its replay.
    expect(after?.steps.map((s) => [s.ref, s.state])).toEqual([
      ["a", "done"],
      ["b", "done"],
    ]);
    expect(after?.state).toBe("succeeded");
  });
});
