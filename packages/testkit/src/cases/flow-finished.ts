/**
 * Workflows meet webhooks and `waitFor`: the `flow.finished` outbox (`flows.notifyFinished`: finished,
 * un-notified flows marked with their deliveries in one transaction, each once) and `soniq.jobs.waitFor` on the
 * job id of a step not released yet. Cases share storage on some backends, so each sweep's builder makes
 * deliveries only for this case's flows and the assertions look only at them.
 */
import assert from "node:assert/strict";
import { Soniq } from "@soniq/core";
import type { NewWebhookDelivery } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { deepEqual, equal } from "./helpers.js";
import { endpoint } from "./webhooks.js";

function app(ctx: CaseContext) {
  const queue = ctx.queue("flowhook");
  const soniq = new Soniq({ backend: ctx.backend, defaultQueue: queue });
  soniq.job("flowhook.ok", async () => "ok");
  soniq.job(
    "flowhook.fail",
    async () => {
      throw new Error("no");
    },
    { maxAttempts: 1 },
  );
  const drain = async () => {
    for (;;) if ((await soniq.worker({ queues: [queue], concurrency: 20 }).runOnce()) === 0) return;
  };
  return { soniq, drain };
}

/** Sweeps until nothing is left; returns every flow id each sweep marked (in order) and writes for `mine`. */
async function sweep(ctx: CaseContext, endpointId: string, mine: ReadonlySet<string>, limit = 2) {
  const marked: string[] = [];
  for (;;) {
    const n = await ctx.backend.flows.notifyFinished(limit, (flows) => {
      marked.push(...flows.map((f) => f.id));
      return flows
        .filter((f) => mine.has(f.id))
        .map(
          (f): NewWebhookDelivery => ({
            id: ctx.id(),
            endpointId,
            event: "flow.finished",
            payload: {
              event: "flow.finished",
              timestamp: (f.finishedAt as Date).toISOString(),
              data: { flowId: f.id, state: f.state, total: f.counts.total },
              metadata: { source: "kit" },
            },
            maxAttempts: 3,
          }),
        );
    });
    if (n < limit) return marked;
  }
}

export const flowFinishedCases = [
  defineCase({
    id: "flows/notify-finished-outbox",
    title:
      "flows.notifyFinished marks every finished flow once (succeeded, failed, cancelled; never a running one) and writes the deliveries built for them with it; concurrent sweeps never share a flow",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      const hook = await endpoint(ctx, { events: ["flow.finished"] });
      const ok = await soniq.flows.start({ name: "kit.ok", steps: { a: { job: "flowhook.ok" } } });
      const failed = await soniq.flows.start({ steps: { a: { job: "flowhook.fail" } } });
      await drain();
      const cancelled = await soniq.flows.start({ steps: { a: { job: "flowhook.ok" } } });
      equal(await soniq.flows.cancel(cancelled.id), true, "the flow cancelled");
      const running = await soniq.flows.start({
        steps: { a: { job: "flowhook.ok", options: { queue: ctx.queue("idle") } } },
      });
      const mine = new Set([ok.id, failed.id, cancelled.id, running.id]);

      const first = (await sweep(ctx, hook.id, mine)).filter((id) => mine.has(id));
      deepEqual([...first].sort(), [ok.id, failed.id, cancelled.id].sort(), "each finished flow marked once");
      const deliveries = await ctx.backend.webhooks.listDeliveries({
        endpointId: hook.id,
        status: null,
        event: "flow.finished",
        limit: 100,
      });
      deepEqual(
        deliveries.map((d) => (d.payload.data as { flowId: string }).flowId).sort(),
        [ok.id, failed.id, cancelled.id].sort(),
        "one delivery per finished flow, written with its mark",
      );
      const states = Object.fromEntries(
        deliveries.map((d) => [(d.payload.data as { flowId: string }).flowId, d.payload.data.state]),
      );
      deepEqual(
        states,
        { [ok.id]: "succeeded", [failed.id]: "failed", [cancelled.id]: "cancelled" },
        "the builder saw each flow's terminal state",
      );
      const again = (await sweep(ctx, hook.id, mine)).filter((id) => mine.has(id));
      deepEqual(again, [], "a marked flow is never taken again; a running one not yet");

      // The running flow finishes: the next sweep takes it, once.
      equal(await soniq.flows.cancel(running.id), true, "the running flow cancelled");
      const later = (await sweep(ctx, hook.id, mine)).filter((id) => mine.has(id));
      deepEqual(later, [running.id], "a flow finished after a sweep is taken by the next");

      // Concurrent sweeps: every flow to exactly one of them.
      const batch = await Promise.all(
        [1, 2, 3, 4, 5, 6].map(() => soniq.flows.start({ steps: { a: { job: "flowhook.ok" } } })),
      );
      await drain();
      const ids = new Set(batch.map((f) => f.id));
      const [x, y] = await Promise.all([sweep(ctx, hook.id, ids, 2), sweep(ctx, hook.id, ids, 2)]);
      const taken = [...x, ...y].filter((id) => ids.has(id));
      equal(taken.length, ids.size, "no flow taken by both sweeps");
      deepEqual(new Set(taken), ids, "every flow taken");
      const total = await ctx.backend.webhooks.listDeliveries({
        endpointId: hook.id,
        status: null,
        event: "flow.finished",
        limit: 100,
      });
      equal(total.length, 10, "one delivery per flow in all");
    },
  }),
  defineCase({
    id: "flows/notify-finished-after-reopen",
    title:
      "a failed flow a replay reopens is un-notified again (notified_at cleared) and its second finish is taken by the next sweep",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      const hook = await endpoint(ctx, { events: ["flow.finished"] });
      let fails = 1;
      soniq.job(
        "flowhook.once",
        async () => {
          if (fails-- > 0) throw new Error("first run fails");
          return "fine";
        },
        { maxAttempts: 1 },
      );
      const started = await soniq.flows.start({ steps: { x: { job: "flowhook.once" } } });
      await drain();
      equal((await soniq.flows.get(started.id))?.state, "failed", "the flow failed");
      const mine = new Set([started.id]);
      deepEqual(
        (await sweep(ctx, hook.id, mine)).filter((id) => mine.has(id)),
        [started.id],
        "taken once",
      );
      await soniq.deadLetters.replay(started.jobs.x as string);
      deepEqual(
        (await sweep(ctx, hook.id, mine)).filter((id) => mine.has(id)),
        [],
        "open again: not taken",
      );
      await drain();
      equal((await soniq.flows.get(started.id))?.state, "succeeded", "the replay finished it");
      deepEqual(
        (await sweep(ctx, hook.id, mine)).filter((id) => mine.has(id)),
        [started.id],
        "its second finish is taken",
      );
    },
  }),
  defineCase({
    id: "flows/wait-for-unreleased-step",
    title:
      "soniq.jobs.waitFor on a waiting step's job id waits for its release and outcome; on a step cancelled before its release it resolves { status: cancelled }",
    async run(ctx) {
      const { soniq, drain } = app(ctx);
      const started = await soniq.flows.start({
        steps: { a: { job: "flowhook.ok" }, b: { job: "flowhook.ok", dependsOn: ["a"] } },
      });
      const b = started.jobs.b as string;
      equal(await soniq.jobs.get(b), null, "b has no job row yet");
      let settled = false;
      const waited = soniq.jobs.waitFor(b, { timeoutMs: 30_000 }).finally(() => {
        settled = true;
      });
      // One read of the missing row has certainly happened once the wait reads it again; it must still wait.
      await new Promise((r) => setImmediate(r));
      await soniq.jobs.get(b);
      equal(settled, false, "still waiting while b waits on a");
      await drain();
      deepEqual(await waited, { status: "done", result: "ok" }, "b's outcome once released and run");

      const held = await soniq.flows.start({
        steps: {
          a: { job: "flowhook.ok", options: { queue: ctx.queue("idle") } },
          b: { job: "flowhook.ok", dependsOn: ["a"] },
        },
      });
      const pending = soniq.jobs.waitFor(held.jobs.b as string, { timeoutMs: 30_000 });
      equal(await soniq.flows.cancel(held.id), true, "the flow cancelled before b's release");
      deepEqual(await pending, { status: "cancelled" }, "a step cancelled before its release");
      await assert.rejects(
        soniq.jobs.waitFor(ctx.id(), { timeoutMs: 30_000 }),
        (err: { code?: string }) => err.code === "SONIQ_JOB_NOT_FOUND",
        "an id of no job and no step still rejects SONIQ_JOB_NOT_FOUND",
      );
    },
  }),
];
