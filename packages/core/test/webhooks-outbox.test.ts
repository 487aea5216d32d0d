/**
 * What the runtime hands the backend: with no endpoint, a settlement carries no deliveries (jobs pay
 * nothing); with one, the outcome's deliveries ride in its settlement, redacted, one per endpoint that
 * subscribes to the event.
 */
import { describe, expect, it } from "vitest";
import type { Settlement } from "../src/contract/index.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { eventually } from "./support.js";

const app = memoryApps();

function recording() {
  const backend = memoryBackend();
  const settled: Settlement[] = [];
  const settle = backend.runs.settle;
  (backend.runs as { settle: typeof settle }).settle = (items, workerId) => {
    settled.push(...items);
    return settle(items, workerId);
  };
  return { backend, settled };
}

describe("webhooks/outbox", () => {
  it("webhooks/no-endpoint-no-cost: without endpoints, settlements carry no deliveries and nothing is written", async () => {
    const { backend, settled } = recording();
    const soniq = app({}, backend);
    await soniq.setup();
    soniq.job("outbox.ok", async () => 1);
    await soniq.enqueue("outbox.ok", {});
    await soniq.worker().runOnce();
    expect(settled).toHaveLength(1);
    expect(settled[0]).not.toHaveProperty("deliveries");
    expect(await soniq.webhooks.deliveries()).toEqual([]);
  });

  it("webhooks/settlement-carries-redacted-deliveries: an outcome's events ride in its settlement, redact applied", async () => {
    const { backend, settled } = recording();
    const soniq = app(
      {
        redact: ["password"],
        webhooks: { secretKey: "unit-test-key-0123456789", allowPrivateNetworks: true },
      },
      backend,
    );
    await soniq.setup();
    const completed = await soniq.webhooks.register({
      url: "http://127.0.0.1:9/a",
      events: ["job.completed"],
      secret: "whsec_unit_0123456789",
    });
    await soniq.webhooks.register({
      url: "http://127.0.0.1:9/b",
      events: ["job.dead_letter"],
      secret: "whsec_unit_0123456789",
      active: true,
    });
    soniq.job("outbox.ok", async () => ({ password: "hunter2", ok: true }));
    await soniq.enqueue("outbox.ok", { user: "ann", password: "hunter2" });
    await soniq.worker({ deliverWebhooks: false }).runOnce();
    await eventually(() => expect(settled).toHaveLength(1));
    const [item] = settled;
    expect(item?.deliveries?.map((d) => [d.endpointId, d.event])).toEqual([[completed.id, "job.completed"]]);
    const data = item?.deliveries?.[0]?.payload.data;
    expect(data).toMatchObject({
      args: { user: "ann", password: "[redacted]" },
      result: { ok: true, password: "[redacted]" },
    });
    expect(JSON.stringify(await soniq.webhooks.deliveries())).not.toContain("hunter2");
  });
});
