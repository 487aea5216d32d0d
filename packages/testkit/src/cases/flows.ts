/**
 * Workflows (DESIGN.md section 15) through the app API on the backend under test: the rules are core's,
 * the rows and the transactions that carry them are the backend's, so every rule runs on every backend.
 * Each case builds its own `Soniq` over the case's backend (never closed: the kit closes the backend) and
 * drains with `worker.runOnce()`, which also runs the steps a settle released.
 */
import assert from "node:assert/strict";
import { PermanentError } from "@soniq/core";
import type { FlowState } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { type App, app, invalid, stateOf, stepStates } from "./flow-support.js";
import { deepEqual, equal } from "./helpers.js";

export const flowCases = [
  defineCase({
    id: "flows/start-writes-roots",
    title:
      "flows.start writes the flow, its steps and the root steps' jobs (ids minted and returned); waiting steps have no job row and are not in the stats",
    async run(ctx) {
      const { soniq, queue } = app(ctx);
      soniq.job("flow.step", async () => null);
      const started = await soniq.flows.start({
        name: "kit.start",
        steps: {
          a: { job: "flow.step", args: { n: 1 } },
          b: { job: "flow.step", args: { n: 2 } },
          c: { job: "flow.step", dependsOn: ["a", "b"] },
        },
      });
      deepEqual(Object.keys(started.jobs).sort(), ["a", "b", "c"], "a job id per ref");
      const a = await soniq.jobs.get(started.jobs.a as string);
      equal(a?.status, "queued", "a root step's job is queued");
      equal(a?.flowId, started.id, "the job carries its flow id");
      equal(a?.stepRef, "a", "the job carries its step ref");
      equal(await soniq.jobs.get(started.jobs.c as string), null, "a waiting step has no job row");
      const stats = await soniq.jobs.stats({ queue });
      deepEqual(
        stats,
        { total: 2, queued: 2, processing: 0, done: 0, dead_letter: 0, cancelled: 0 },
        "stats count the two root jobs only",
      );
      const flow = await soniq.flows.get(started.id);
      equal(flow?.name, "kit.start", "name kept");
      equal(flow?.state, "running", "a new flow is running");
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "queued", b: "queued", c: "waiting" },
        "step states",
      );
      deepEqual(flow?.counts, { total: 3, open: 3, done: 0, failed: 0, held: 0 }, "counts");
      const listed = await soniq.flows.list({ name: "kit.start" });
      assert.ok(
        listed.some((f) => f.id === started.id),
        "flows.list finds it by name",
      );
    },
  }),
  defineCase({
    id: "flows/validated-nothing-written",
    title:
      "flows.start refuses unknown refs, self-dependencies, cycles, bad refs, duplicate parents and args failing the schema with SONIQ_INVALID_FLOW naming the field and ref; nothing is written",
    async run(ctx) {
      const { soniq, queue } = app(ctx);
      const schema = {
        "~standard": {
          version: 1 as const,
          vendor: "kit",
          validate: (v: unknown) =>
            typeof (v as { n?: unknown })?.n === "number"
              ? { value: v }
              : { issues: [{ message: "n must be a number", path: ["n"] }] },
        },
      };
      soniq.job("flow.step", async () => null, { schema });
      const ok = { job: "flow.step", args: { n: 1 } };
      await invalid(
        soniq.flows.start({ steps: { a: { ...ok, dependsOn: ["zz"] } } }),
        "steps.a.dependsOn",
        "unknown ref",
      );
      await invalid(
        soniq.flows.start({ steps: { a: { ...ok, dependsOn: ["a"] } } }),
        "steps.a.dependsOn",
        "self-dependency",
      );
      const cycle = await invalid(
        soniq.flows.start({
          steps: { r: ok, a: { ...ok, dependsOn: ["b"] }, b: { ...ok, dependsOn: ["a"] } },
        }),
        "steps.a.dependsOn",
        "cycle",
      );
      equal(cycle.context.ref, "a", "the cycle error names a ref in the cycle");
      await invalid(soniq.flows.start({ steps: { "Bad Ref": ok } }), "steps", "bad ref");
      await invalid(
        soniq.flows.start({ steps: { a: ok, b: { ...ok, dependsOn: ["a", "a"] } } }),
        "steps.b.dependsOn",
        "duplicate parent",
      );
      const args = await invalid(
        soniq.flows.start({ steps: { a: ok, b: { job: "flow.step", args: { n: "x" }, dependsOn: ["a"] } } }),
        "steps.b.args",
        "args failing the schema",
      );
      equal(args.context.ref, "b", "the args error names the step");
      await invalid(soniq.flows.start({ steps: {} }), "steps", "no steps");
      equal((await soniq.jobs.stats({ queue })).total, 0, "no job was written");
      equal(
        (await soniq.flows.list({ limit: 1000 })).filter((f) => f.name === null && f.counts.total === 0)
          .length,
        0,
        "no empty flow row",
      );
    },
  }),
  defineCase({
    id: "flows/list-filters-by-state",
    title:
      "flows.list({ state }) returns only flows in that state (running, held, succeeded, failed, cancelled), alone and with name, while flows in every other state exist",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      soniq.job("flow.ok", async () => null);
      soniq.job("flow.fail", async () => {
        throw new PermanentError("no");
      });
      const name = `kit.list.${ctx.id().replaceAll("-", "_")}`;
      const start = (steps: Parameters<App["flows"]["start"]>[0]["steps"]) =>
        soniq.flows.start({ name, steps });
      const mine = {
        succeeded: (await start({ a: { job: "flow.ok" } })).id,
        failed: (await start({ a: { job: "flow.fail" } })).id,
        held: (await start({ a: { job: "flow.fail" }, b: { job: "flow.ok", dependsOn: ["a"] } })).id,
        cancelled: (await start({ a: { job: "flow.ok", options: { queue: ctx.queue("idle") } } })).id,
        running: (await start({ a: { job: "flow.ok", options: { queue: ctx.queue("idle") } } })).id,
      } as const;
      await drain();
      equal(await soniq.flows.cancel(mine.cancelled), true, "setup: the flow cancelled");
      for (const [state, id] of Object.entries(mine)) {
        equal(await stateOf(soniq, id), state, `setup: the ${state} flow is ${state}`);
      }
      const ours = new Set<string>(Object.values(mine));
      for (const [state, id] of Object.entries(mine) as [FlowState, string][]) {
        const listed = await soniq.flows.list({ state, limit: 1000 });
        deepEqual(
          [...new Set(listed.map((f) => f.state))].filter((s) => s !== state),
          [],
          `flows.list({ state: "${state}" }) must return ${state} flows only`,
        );
        deepEqual(
          listed.filter((f) => ours.has(f.id)).map((f) => f.id),
          [id],
          `flows.list({ state: "${state}" }) must find this case's ${state} flow and none of its others`,
        );
        deepEqual(
          (await soniq.flows.list({ state, name })).map((f) => f.id),
          [id],
          `flows.list({ state: "${state}", name }) must return the one flow with that name in that state`,
        );
      }
    },
  }),
  defineCase({
    id: "flows/diamond-once-in-order",
    title:
      "a diamond (a -> b, c -> d) runs each step once, d after b and c, with b's and c's results in ctx.flow.parents(); the flow succeeds",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      const ran: string[] = [];
      let seen: unknown = null;
      soniq.job("flow.step", async (args: { ref: string }, c) => {
        ran.push(args.ref);
        if (args.ref === "d") seen = await c.flow?.parents();
        return { from: args.ref };
      });
      const steps = {
        a: { job: "flow.step", args: { ref: "a" } },
        b: { job: "flow.step", args: { ref: "b" }, dependsOn: ["a"] },
        c: { job: "flow.step", args: { ref: "c" }, dependsOn: ["a"] },
        d: { job: "flow.step", args: { ref: "d" }, dependsOn: ["b", "c"] },
      };
      const { id } = await soniq.flows.start({ steps });
      await drain();
      equal(ran.length, 4, `each step ran once (ran: ${ran.join(",")})`);
      equal(ran[0], "a", "a first");
      equal(ran[3], "d", "d last");
      deepEqual(
        seen,
        { b: { status: "done", result: { from: "b" } }, c: { status: "done", result: { from: "c" } } },
        "d sees b and c",
      );
      const flow = await soniq.flows.get(id);
      equal(flow?.state, "succeeded", "the flow succeeded");
      assert.ok(flow?.finishedAt instanceof Date, "finishedAt is set");
      for (const step of flow?.steps ?? []) {
        assert.ok(step.finishedAt instanceof Date, `step ${step.ref} has its finishedAt`);
        equal(step.pendingParents, 0, `step ${step.ref} waits for no parent`);
        equal(step.reason, null, `step ${step.ref} has no reason`);
      }
      deepEqual(flow?.counts, { total: 4, open: 0, done: 4, failed: 0, held: 0 }, "counts");
      const done = await soniq.flows.waitFor(id, { timeoutMs: 1000 });
      equal(done.state, "succeeded", "waitFor resolves with the finished flow");
    },
  }),
  defineCase({
    id: "flows/fan-in-2000-releases-once",
    title: "a fan-in of 2,000 parents releases its child exactly once, after the last parent",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      let childRuns = 0;
      let parentsSeen = 0;
      soniq.job("flow.parent", async () => 1);
      soniq.job("flow.child", async (_args, c) => {
        childRuns++;
        parentsSeen = Object.keys((await c.flow?.parents()) ?? {}).length;
        return null;
      });
      const steps: Record<string, { job: string; args?: unknown; dependsOn?: string[] }> = {};
      const parents = Array.from({ length: 2000 }, (_, i) => `p${i}`);
      for (const ref of parents) steps[ref] = { job: "flow.parent" };
      steps.child = { job: "flow.child", dependsOn: parents };
      const { id } = await soniq.flows.start({ steps });
      await drain();
      equal(childRuns, 1, "the child ran exactly once");
      equal(parentsSeen, 2000, "the child saw its 2,000 parents done");
      equal(await stateOf(soniq, id), "succeeded", "the flow succeeded");
    },
  }),
  defineCase({
    id: "flows/add-once-on-retry",
    title:
      "ctx.flow.add of 50 items from a step that fails once adds 50 steps, not 100, and they run with their fan-in",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      let attempts = 0;
      let totals = 0;
      soniq.job(
        "flow.split",
        async (_a, c) => {
          attempts++;
          const items: Record<string, { job: string; args: unknown; dependsOn?: string[] }> = {};
          for (let i = 0; i < 50; i++) items[`item_${i}`] = { job: "flow.item", args: { i } };
          items.total = { job: "flow.total", args: {}, dependsOn: Object.keys(items) };
          await c.flow?.add(items);
          if (attempts === 1) throw new Error("first run fails after adding");
          return null;
        },
        { retry: { delaysMs: [0] } },
      );
      soniq.job("flow.item", async (args: { i: number }) => args.i);
      soniq.job("flow.total", async (_a, c) => {
        totals++;
        return Object.keys((await c.flow?.parents()) ?? {}).length;
      });
      const { id } = await soniq.flows.start({ steps: { split: { job: "flow.split" } } });
      await drain();
      const flow = await soniq.flows.get(id);
      equal(attempts, 2, "the splitting step ran twice");
      equal(flow?.steps.length, 52, "50 items + total + split: added once");
      equal(totals, 1, "the fan-in ran once");
      equal(flow?.state, "succeeded", "the flow succeeded");
      equal(flow?.steps.find((s) => s.ref === "item_3")?.addedBy, "split", "addedBy names the adding step");
    },
  }),
  defineCase({
    id: "flows/explain-waiting-and-results-kept",
    title:
      "explain of a waiting step's job id answers waiting_on_parents with the pending refs; a parent's result is kept for its dependents whatever its TTL",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      let seen: unknown = null;
      soniq.job("flow.a", async () => ({ total: 42 }), { resultTtlMs: 0 });
      soniq.job("flow.b", async (_a, c) => {
        seen = await c.flow?.parents();
        return null;
      });
      const started = await soniq.flows.start({
        steps: { a: { job: "flow.a" }, b: { job: "flow.b", dependsOn: ["a"] } },
      });
      const why = await soniq.jobs.explain(started.jobs.b as string);
      equal(why.status, "waiting", "a waiting step");
      equal(why.reasons[0]?.code, "waiting_on_parents", "waiting_on_parents");
      deepEqual(why.reasons[0]?.evidence.pending, ["a"], "names the pending parent");
      await drain();
      deepEqual(
        seen,
        { a: { status: "done", result: { total: 42 } } },
        "the result with TTL 0 was kept for b",
      );
    },
  }),
] as const;
