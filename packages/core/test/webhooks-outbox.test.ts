/**
 * What the runtime hands the backend: with no endpoint, a settlement carries no deliveries (jobs pay
 * nothing); with one, the outcome's deliveries ride in its settlement, redacted, one per endpoint that
 * subscribes to the event.
 */
import { describe, expect, it } from "vitest";
import type { Settlement } from "../src/contract/index.js";
import { isSoniqError, Soniq } from "../src/index.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
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
    await soniq.jobs.enqueue("outbox.ok", {});
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
    await soniq.jobs.enqueue("outbox.ok", { user: "ann", password: "hunter2" });
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

  it("webhooks/retention-pruned-by-maintenance: the maintenance pass deletes finished deliveries past webhooks.retentionMs (7 days by default)", async () => {
    const base = memoryBackend();
    const prunes: number[] = [];
    const backend = overriding(base, "webhooks", {
      prune: (olderThanMs: number) => {
        prunes.push(olderThanMs);
        return base.webhooks.prune(olderThanMs);
      },
    });
    const key = "unit-test-key-0123456789";
    const soniq = app({ webhooks: { secretKey: key, allowPrivateNetworks: true, retentionMs: 0 } }, backend);
    await soniq.setup();
    const endpoint = await soniq.webhooks.register({
      url: "http://127.0.0.1:9/a",
      events: ["job.completed"],
      secret: "whsec_unit_0123456789",
    });
    // A delivery that failed for good and one still pending, written straight to the backend.
    const delivery = (id: string) => ({
      id,
      endpointId: endpoint.id,
      event: "job.completed" as const,
      payload: {
        event: "job.completed" as const,
        timestamp: new Date().toISOString(),
        data: {},
        metadata: {},
      },
      maxAttempts: 1,
    });
    const [failed, pending] = [crypto.randomUUID(), crypto.randomUUID()];
    await base.webhooks.enqueue([delivery(failed), delivery(pending)]);
    const [claimed] = (await base.webhooks.claimDue({ limit: 10, leaseMs: 60_000 })).filter(
      (d) => d.id === failed,
    );
    expect(claimed?.attempts).toBe(1);
    const gaveUp = { attempt: 1, delayMs: 0, lastError: "refused", responseStatus: null, responseBody: null };
    expect(await base.webhooks.recordAttempt({ ...gaveUp, id: failed, status: "failed" })).toBe(true);
    const worker = soniq.worker({ deliverWebhooks: false });
    await worker.start();
    await eventually(async () => expect(await base.webhooks.getDelivery(failed)).toBeNull());
    await worker.stop();
    expect((await base.webhooks.getDelivery(pending))?.status).toBe("pending");
    expect(prunes[0]).toBe(0);

    const byDefault = new Soniq({ backend });
    await byDefault.setup();
    const other = byDefault.worker({ deliverWebhooks: false });
    await other.start();
    await eventually(() => expect(prunes.length).toBeGreaterThanOrEqual(2));
    await other.stop();
    await byDefault.close();
    expect(prunes[1]).toBe(7 * 24 * 3_600_000);
  });

  it("webhooks/retention-option-checked: a negative or fractional webhooks.retentionMs is refused with a typed error", () => {
    for (const retentionMs of [-1, 1.5, "7d"]) {
      let error: unknown;
      try {
        new Soniq({ backend: memoryBackend(), webhooks: { retentionMs: retentionMs as number } });
      } catch (err) {
        error = err;
      }
      expect(isSoniqError(error) && error.code).toBe("SONIQ_INVALID_OPTIONS");
      expect(String((error as Error).message)).toContain(
        "webhooks.retentionMs must be an integer of at least 0",
      );
    }
  });
});
