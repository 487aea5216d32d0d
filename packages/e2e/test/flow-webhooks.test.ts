/**
 * `flow.finished` end to end on every backend, against a local receiver on 127.0.0.1: each flow that
 * succeeds, fails or is cancelled reaches the endpoint once, signed, with its documented data; a flow still
 * running sends nothing until it finishes.
 */
import { PermanentError, Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, eventually, matrixHarness, uniqueName } from "./runtime-support.js";
import { type Receiver, receiver, SECRET, SECRET_KEY } from "./webhooks-support.js";

const FAST = { heartbeatIntervalMs: 50, staleAfterMs: 2000, maintenanceIntervalMs: 50, pollIntervalMs: 50 };

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))("flow.finished on %s", (_name, make) => {
  const h = matrixHarness(make);

  async function listening(): Promise<Receiver> {
    const r = await receiver();
    h.defer(() => r.close());
    return r;
  }

  it("webhooks/flow-finished-delivered-once: every finished flow reaches the endpoint once, signed, with { flowId, name, state, counts, createdAt, finishedAt }", async () => {
    const r = await listening();
    const soniq = new Soniq({
      backend: h.kind.create(),
      webhooks: { secretKey: SECRET_KEY, allowPrivateNetworks: true },
    });
    h.defer(() => soniq.close());
    await soniq.setup();
    await soniq.webhooks.register({ url: r.url, events: ["flow.finished"], secret: SECRET });
    const queue = h.queue;
    const idle = uniqueName("idle");
    soniq.job("fh.ok", async () => "ok", { queue });
    soniq.job(
      "fh.fail",
      async () => {
        throw new PermanentError("no");
      },
      { queue },
    );
    await h.started(soniq.worker({ queues: [queue], ...FAST }));

    const ok = await soniq.flows.start({
      name: "fh.ok",
      steps: { a: { job: "fh.ok" }, b: { job: "fh.ok", dependsOn: ["a"] } },
    });
    const failed = await soniq.flows.start({ name: "fh.fail", steps: { a: { job: "fh.fail" } } });
    const cancelled = await soniq.flows.start({
      steps: { a: { job: "fh.ok", options: { queue: idle } }, b: { job: "fh.ok", dependsOn: ["a"] } },
    });
    const running = await soniq.flows.start({ steps: { a: { job: "fh.ok", options: { queue: idle } } } });
    await soniq.flows.cancel(cancelled.id);

    const finishedIds = () => r.requests.map((q) => q.payload.data.flowId);
    await eventually(
      () => expect([...finishedIds()].sort()).toEqual([ok.id, failed.id, cancelled.id].sort()),
      15_000,
    );
    expect(r.requests.every((q) => q.event === "flow.finished")).toBe(true);
    expect(r.signedWith(SECRET)).toHaveLength(r.requests.length);
    const flow = await soniq.flows.get(ok.id);
    expect(r.requests.find((q) => q.payload.data.flowId === ok.id)?.payload.data).toEqual({
      flowId: ok.id,
      name: "fh.ok",
      state: "succeeded",
      counts: { total: 2, open: 0, done: 2, failed: 0, held: 0 },
      createdAt: flow?.createdAt.toISOString(),
      finishedAt: flow?.finishedAt?.toISOString(),
    });
    const stateOf = (id: string) => r.requests.find((q) => q.payload.data.flowId === id)?.payload.data.state;
    expect(stateOf(failed.id)).toBe("failed");
    expect(stateOf(cancelled.id)).toBe("cancelled");
    expect(finishedIds()).not.toContain(running.id);

    // The running flow finishes later: it arrives, and by then the first three are still there once each.
    await soniq.flows.cancel(running.id);
    await eventually(() => expect(finishedIds()).toContain(running.id), 15_000);
    expect([...finishedIds()].sort()).toEqual([ok.id, failed.id, cancelled.id, running.id].sort());
    expect(new Set(r.requests.map((q) => q.deliveryId)).size).toBe(4);
  }, 60_000);

  it("webhooks/flow-step-job-events: a flow step's done and dead letter send their job events, and the flow runs on", async () => {
    const r = await listening();
    const soniq = new Soniq({
      backend: h.kind.create(),
      webhooks: { secretKey: SECRET_KEY, allowPrivateNetworks: true },
    });
    h.defer(() => soniq.close());
    await soniq.setup();
    await soniq.webhooks.register({
      url: r.url,
      events: ["job.completed", "job.dead_letter"],
      secret: SECRET,
    });
    const queue = h.queue;
    soniq.job("fs.ok", async () => "ok", { queue });
    soniq.job(
      "fs.fail",
      async () => {
        throw new PermanentError("no");
      },
      { queue },
    );
    await h.started(soniq.worker({ queues: [queue], ...FAST }));
    // The settle of a step's outcome carries the step's flow work and its webhook deliveries together.
    const flow = await soniq.flows.start({
      steps: {
        a: { job: "fs.ok" },
        b: { job: "fs.fail", dependsOn: ["a"] },
        c: { job: "fs.ok", dependsOn: ["b"], onParentFailure: "run" },
      },
    });
    const done = await soniq.flows.waitFor(flow.id, { timeoutMs: 15_000 });
    expect(done.state).toBe("failed");
    expect(done.steps.map((s) => s.state)).toEqual(["done", "dead_lettered", "done"]);
    const seen = () => r.requests.map((q) => `${q.event} ${q.payload.data.jobId}`).sort();
    await eventually(
      () =>
        expect(seen()).toEqual(
          [
            `job.completed ${flow.jobs.a}`,
            `job.dead_letter ${flow.jobs.b}`,
            `job.completed ${flow.jobs.c}`,
          ].sort(),
        ),
      15_000,
    );
    expect(r.signedWith(SECRET)).toHaveLength(3);
  }, 60_000);
});
