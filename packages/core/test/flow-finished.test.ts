/**
 * `flow.finished` from the runtime's side (webhooks/flow-finished.ts): the worker holding the maintenance
 * lease sweeps finished flows, marks them even with no endpoint (a later endpoint never gets old flows),
 * writes one delivery per finished flow with the documented data, and fires again for a flow a replay
 * reopened and finished again.
 */
import { describe, expect, it } from "vitest";
import { PermanentError } from "../src/index.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { eventually } from "./support.js";

const app = memoryApps();
const FAST = { heartbeatIntervalMs: 20, staleAfterMs: 1000, maintenanceIntervalMs: 20, pollIntervalMs: 20 };

function sweeping() {
  const backend = memoryBackend();
  const marked: string[] = [];
  let sweeps = 0;
  const notify = backend.flows.notifyFinished;
  (backend.flows as { notifyFinished: typeof notify }).notifyFinished = (limit, deliveries) => {
    sweeps++;
    return notify(limit, (flows) => {
      marked.push(...flows.map((f) => f.id));
      return deliveries(flows);
    });
  };
  return { backend, marked, sweeps: () => sweeps };
}

describe("webhooks/flow-finished", () => {
  it("webhooks/flow-finished-once: marked without endpoints; afterwards one delivery per finished flow with { flowId, name, state, counts, createdAt, finishedAt }; again after a reopen", async () => {
    const { backend, marked, sweeps } = sweeping();
    const soniq = app(
      { webhooks: { secretKey: "unit-test-key-0123456789", allowPrivateNetworks: true, refreshMs: 10 } },
      backend,
    );
    await soniq.setup();
    let fails = 1;
    soniq.job("ff.ok", async () => "ok");
    soniq.job("ff.once", async () => {
      if (fails-- > 0) throw new PermanentError("first run fails");
      return "fine";
    });
    const worker = soniq.worker({ deliverWebhooks: false, ...FAST });
    await worker.start();
    try {
      const old = await soniq.flows.start({ name: "ff.old", steps: { a: { job: "ff.ok" } } });
      await eventually(() => expect(marked).toContain(old.id));

      const endpoint = await soniq.webhooks.register({
        url: "http://127.0.0.1:9/flows",
        events: ["flow.finished"],
        secret: "whsec_unit_0123456789",
      });
      const fresh = await soniq.flows.start({
        name: "ff.new",
        steps: { a: { job: "ff.ok" }, b: { job: "ff.ok", dependsOn: ["a"] } },
      });
      const reopened = await soniq.flows.start({ steps: { x: { job: "ff.once" } } });
      const deliveries = () => soniq.webhooks.deliveries({ endpointId: endpoint.id, event: "flow.finished" });
      await eventually(async () => expect(await deliveries()).toHaveLength(2));
      const flow = await soniq.flows.get(fresh.id);
      const delivery = (await deliveries()).find((d) => d.payload.data.flowId === fresh.id);
      expect(delivery?.payload.data).toEqual({
        flowId: fresh.id,
        name: "ff.new",
        state: "succeeded",
        counts: { total: 2, open: 0, done: 2, failed: 0, held: 0 },
        createdAt: flow?.createdAt.toISOString(),
        finishedAt: flow?.finishedAt?.toISOString(),
      });
      expect(delivery?.payload.timestamp).toBe(flow?.finishedAt?.toISOString());
      const failed = (await deliveries()).find((d) => d.payload.data.flowId === reopened.id);
      expect(failed?.payload.data).toMatchObject({ state: "failed" });

      // A replay reopens the failed flow; its second finish fires once more.
      const [dead] = await soniq.deadLetters.list({ limit: 10 });
      expect(dead?.id).toBe(reopened.jobs.x);
      await soniq.deadLetters.replay(dead?.id as string);
      await eventually(async () => expect(await deliveries()).toHaveLength(3));
      const states = (await deliveries())
        .filter((d) => d.payload.data.flowId === reopened.id)
        .map((d) => d.payload.data.state)
        .sort();
      expect(states).toEqual(["failed", "succeeded"]);

      // Later sweeps add nothing: each finish was delivered once, the old flow never.
      const after = sweeps();
      await eventually(() => expect(sweeps()).toBeGreaterThan(after + 2));
      const all = await deliveries();
      expect(all).toHaveLength(3);
      expect(all.map((d) => d.payload.data.flowId)).not.toContain(old.id);
      expect(marked.filter((id) => id === fresh.id)).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });
});
