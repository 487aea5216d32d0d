/**
 * Workflows when a step fails or is cancelled (DESIGN.md section 15): the dependents' policies (hold, cancel,
 * run), a held step's replay and purge, a cancelled parent and a cancelled flow, through the app API on the
 * backend under test, as cases/flows.ts.
 */
import assert from "node:assert/strict";
import { PermanentError } from "@soniq/core";
import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import { app, stateOf, stepStates } from "./flow-support.js";
import { deepEqual, equal } from "./helpers.js";

export const flowFailureCases = [
  defineCase({
    id: "flows/hold-replay-resumes",
    title:
      "a dead-lettered parent holds its dependents and the flow (explain: held_by_dead_letter); replaying it puts the new job in the step's place and the flow runs on",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      let fail = true;
      const ran: string[] = [];
      soniq.job("flow.step", async (args: { ref: string }) => {
        if (args.ref === "a" && fail) throw new PermanentError("card declined");
        ran.push(args.ref);
        return args.ref;
      });
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.step", args: { ref: "a" } },
          b: { job: "flow.step", args: { ref: "b" }, dependsOn: ["a"] },
          c: { job: "flow.step", args: { ref: "c" }, dependsOn: ["b"] },
        },
      });
      await drain();
      equal(await stateOf(soniq, started.id), "held", "the flow is held");
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "dead_lettered", b: "held", c: "waiting" },
        "a dead, b held, c waiting",
      );
      const why = await soniq.jobs.explain(started.jobs.b as string);
      equal(why.status, "held", "explain of the held step's job id");
      const held = why.reasons.find((r) => r.code === "held_by_dead_letter");
      assert.ok(held, `explain names held_by_dead_letter (got ${why.reasons.map((r) => r.code).join(",")})`);
      equal(held.evidence.parentRef, "a", "evidence: the parent's ref");
      equal(held.evidence.deadLetterId, started.jobs.a, "evidence: the dead-letter id");
      equal(held.evidence.reason, "permanent_failure", "evidence: the reason");
      fail = false;
      const newId = (await soniq.deadLetters.replay(started.jobs.a as string)) as string;
      const flow = await soniq.flows.get(started.id);
      const a = flow?.steps.find((s) => s.ref === "a");
      equal(a?.jobId, newId, "the replayed job takes the step's place");
      deepEqual(a?.jobIds, [started.jobs.a, newId], "the step keeps its job id history");
      equal((await soniq.jobs.get(newId))?.flowId, started.id, "the replayed job rejoins the flow");
      await drain();
      deepEqual(ran, ["a", "b", "c"], "the held dependents ran after the replay");
      equal(await stateOf(soniq, started.id), "succeeded", "the flow ran on and succeeded");
    },
  }),
  defineCase({
    id: "flows/replayed-parent-counts-once",
    title:
      "a fan-in step waits for every parent: a dead-lettered parent replayed and done counts once, so the child still waits for an open one",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      let failA = true;
      soniq.job("flow.a", async () => {
        if (failA) throw new PermanentError("not yet");
        return "a";
      });
      soniq.job("flow.ok", async () => null);
      // c runs on a queue the drain never reads: it stays open while a is replayed and done.
      const parked = ctx.queue("parked");
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.a" },
          b: { job: "flow.ok" },
          c: { job: "flow.ok", options: { queue: parked } },
          d: { job: "flow.ok", dependsOn: ["a", "b", "c"] },
        },
      });
      await drain();
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "dead_lettered", b: "done", c: "queued", d: "held" },
        "setup: a dead-lettered holds d; b done; c open on its own queue",
      );
      failA = false;
      assert.ok(await soniq.deadLetters.replay(started.jobs.a as string), "setup: a replayed");
      await drain();
      const states = await stepStates(soniq, started.id);
      deepEqual(
        { a: states.a, b: states.b, c: states.c },
        { a: "done", b: "done", c: "queued" },
        "a's replay ran and is done, b done, c still open",
      );
      assert.ok(
        states.d === "waiting" || states.d === "held",
        `a's replay done and b done count once each, so d still waits for c; a parent counted twice releases d early (d is ${states.d})`,
      );
      equal(
        (await soniq.jobs.get(started.jobs.d as string))?.status ?? null,
        null,
        "d's job is not written (not queued, not run) while c is open",
      );
    },
  }),
  defineCase({
    id: "flows/purge-cancels-held",
    title:
      "purging a held parent's dead letter cancels the held dependents (parent_purged) and the flow ends failed",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      soniq.job("flow.fail", async () => {
        throw new PermanentError("no");
      });
      soniq.job("flow.ok", async () => null);
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.fail" },
          b: { job: "flow.ok", dependsOn: ["a"] },
          c: { job: "flow.ok", dependsOn: ["b"] },
        },
      });
      await drain();
      equal(await soniq.deadLetters.purge(started.jobs.a as string), true, "purged");
      const flow = await soniq.flows.get(started.id);
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "dead_lettered", b: "cancelled", c: "cancelled" },
        "dependents cancelled",
      );
      equal(flow?.steps.find((s) => s.ref === "b")?.reason, "parent_purged", "reason parent_purged");
      equal(flow?.state, "failed", "the flow failed");
    },
  }),
  defineCase({
    id: "flows/cancel-and-run-policies",
    title:
      'a dead-lettered parent cancels "cancel" dependents at once and releases "run" dependents, which see { status: "dead_lettered", reason, lastError }',
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      let seen: unknown = null;
      soniq.job("flow.fail", async () => {
        throw new PermanentError("boom");
      });
      soniq.job("flow.ok", async (_a, c) => {
        seen = await c.flow?.parents();
        return null;
      });
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.fail" },
          x: { job: "flow.ok", dependsOn: ["a"], onParentFailure: "cancel" },
          y: { job: "flow.ok", dependsOn: ["x"], onParentFailure: "hold" },
          r: { job: "flow.ok", dependsOn: ["a"], onParentFailure: "run" },
        },
      });
      await drain();
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "dead_lettered", x: "cancelled", y: "cancelled", r: "done" },
        "x cancelled (and y below it), r ran",
      );
      const saved = Object.fromEntries(
        ((await soniq.flows.get(started.id))?.steps ?? []).map((step) => [
          step.ref,
          [step.reason, step.pendingParents, step.finishedAt instanceof Date],
        ]),
      );
      deepEqual(
        saved,
        {
          a: [null, 0, true],
          x: ["parent_dead_lettered", 1, true],
          y: ["parent_cancelled", 1, true],
          r: [null, 0, true],
        },
        "each step's reason, parents still pending and finish time, as its release saved them",
      );
      const parents = seen as Record<string, { status: string; reason?: string; lastError?: string | null }>;
      equal(parents.a?.status, "dead_lettered", "r sees a dead-lettered");
      equal(parents.a?.reason, "permanent_failure", "with the reason");
      assert.ok(String(parents.a?.lastError).includes("boom"), "and the last error");
      equal(await stateOf(soniq, started.id), "failed", "every step terminal, not all done: failed");
    },
  }),
  defineCase({
    id: "flows/cancelled-parent",
    title: 'a cancelled parent cancels its dependents unless they run on failure ("run")',
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      soniq.job("flow.ok", async () => null);
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.ok" },
          h: { job: "flow.ok", dependsOn: ["a"] },
          r: { job: "flow.ok", dependsOn: ["a"], onParentFailure: "run" },
        },
      });
      equal(await soniq.jobs.cancel(started.jobs.a as string), true, "the root's job cancelled");
      await drain();
      const flow = await soniq.flows.get(started.id);
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "cancelled", h: "cancelled", r: "done" },
        "h cancelled, r ran",
      );
      equal(flow?.steps.find((s) => s.ref === "h")?.reason, "parent_cancelled", "reason parent_cancelled");
    },
  }),
  defineCase({
    id: "flows/cancel-flow",
    title:
      "flows.cancel cancels waiting, held and queued steps and their jobs, is audited flow.cancel, and is false for a finished or unknown flow",
    async run(ctx) {
      const { soniq } = app(ctx);
      soniq.job("flow.ok", async () => null);
      const started = await soniq.flows.start({
        steps: { a: { job: "flow.ok" }, b: { job: "flow.ok", dependsOn: ["a"] } },
      });
      equal(await soniq.flows.cancel(started.id, { actor: "kit" }), true, "cancelled");
      equal(await stateOf(soniq, started.id), "cancelled", "the flow is cancelled");
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "cancelled", b: "cancelled" },
        "every step cancelled",
      );
      equal(
        (await soniq.jobs.get(started.jobs.a as string))?.status,
        "cancelled",
        "the queued job cancelled",
      );
      equal(await soniq.flows.cancel(started.id), false, "a second cancel finds nothing to do");
      const audit = await soniq.audit.list({ action: "flow.cancel", limit: 1000 });
      const row = audit.find((r) => r.target === started.id && r.outcome === "ok");
      equal(row?.actor, "kit", "audited with the actor");
    },
  }),
  defineCase({
    id: "flows/cancel-announces-finished",
    title:
      "flows.cancel announces the jobs it cancelled to subscribeFinished, as jobs.cancel does (a waitFor on one hears it)",
    async run(ctx) {
      const { soniq } = app(ctx);
      soniq.job("flow.ok", async () => null);
      const heard = new Set<string>();
      const unsubscribe = await ctx.backend.wakeUps.subscribeFinished((ids) => {
        for (const id of ids) heard.add(id);
      });
      ctx.defer(unsubscribe);
      const started = await soniq.flows.start({
        steps: { a: { job: "flow.ok" }, b: { job: "flow.ok" }, c: { job: "flow.ok", dependsOn: ["a", "b"] } },
      });
      const queued = [started.jobs.a, started.jobs.b] as string[];
      equal(await soniq.flows.cancel(started.id), true, "setup: the flow is cancelled");
      await eventually(
        () =>
          assert.ok(
            queued.every((id) => heard.has(id)),
            `flows.cancel cancelled the queued jobs ${queued.join(", ")}; subscribeFinished heard ${[...heard].join(", ") || "nothing"}`,
          ),
        { timeoutMs: 5000 },
      );
    },
  }),
  defineCase({
    id: "flows/cancel-flow-with-held-steps",
    title:
      "flows.cancel of a held flow cancels its held steps and the steps waiting below them (flow_cancelled); the flow ends cancelled with nothing held or open",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      soniq.job("flow.fail", async () => {
        throw new PermanentError("no");
      });
      soniq.job("flow.ok", async () => null);
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.fail" },
          b: { job: "flow.ok", dependsOn: ["a"] },
          c: { job: "flow.ok", dependsOn: ["a"] },
          d: { job: "flow.ok", dependsOn: ["b", "c"] },
        },
      });
      await drain();
      deepEqual(
        await stepStates(soniq, started.id),
        { a: "dead_lettered", b: "held", c: "held", d: "waiting" },
        "setup: a dead-lettered holds b and c; d waits on them",
      );
      equal(await stateOf(soniq, started.id), "held", "setup: the flow is held");
      equal(await soniq.flows.cancel(started.id), true, "flows.cancel of a held flow must cancel it");
      const flow = await soniq.flows.get(started.id);
      deepEqual(
        Object.fromEntries((flow?.steps ?? []).map((s) => [s.ref, [s.state, s.reason]])),
        {
          a: ["dead_lettered", null],
          b: ["cancelled", "flow_cancelled"],
          c: ["cancelled", "flow_cancelled"],
          d: ["cancelled", "flow_cancelled"],
        },
        "every held and waiting step must end cancelled (flow_cancelled); the dead-lettered one stays",
      );
      equal(flow?.state, "cancelled", "the flow is cancelled");
      deepEqual(flow?.counts, { total: 4, open: 0, done: 0, failed: 4, held: 0 }, "nothing held or open");
      equal(await soniq.flows.cancel(started.id), false, "a second cancel finds nothing to do");
    },
  }),
] as const;
