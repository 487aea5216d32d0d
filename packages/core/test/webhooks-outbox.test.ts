/**
 * What the runtime hands the backend: with no endpoint, a settlement carries no deliveries (jobs pay
 * nothing); with one, the outcome's deliveries ride in its settlement, redacted, one per endpoint that
 * subscribes to the event.
 */
import { describe, expect, it } from "vitest";
import type { Settlement } from "../src/contract/index.js";
import { isSoniqError, Soniq } from "../src/index.js";
import type { WebhookPendingEvent } from "../src/plugin.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { caught, eventually } from "./support.js";

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
    // The backend's clock runs a millisecond ahead once the failed delivery is recorded: with retentionMs 0, a
    // delivery finished in the very millisecond of the maintenance pass is not yet past its retention.
    let ahead = 0;
    const base = memoryBackend({ now: () => Date.now() + ahead });
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
    ahead = 1;
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

  it("webhooks/pending-ceiling-by-maintenance: a delivery still pending webhooks.pendingMaxAgeMs after it was written is ended as failed by the maintenance pass, saying why; a younger one stays pending; the ended one is kept for retention and redeliverable", async () => {
    let now = Date.now();
    const base = memoryBackend({ now: () => now });
    const ages: number[] = [];
    const backend = overriding(base, "webhooks", {
      expirePending: (olderThanMs: number, lastError: string) => {
        ages.push(olderThanMs);
        return base.webhooks.expirePending(olderThanMs, lastError);
      },
    });
    const key = "unit-test-key-0123456789";
    const soniq = app({ webhooks: { secretKey: key, allowPrivateNetworks: true } }, backend);
    await soniq.setup();
    const endpoint = await soniq.webhooks.register({
      url: "http://127.0.0.1:9/a",
      events: ["job.completed"],
      secret: "whsec_unit_0123456789",
    });
    const delivery = (id: string) => ({
      id,
      endpointId: endpoint.id,
      event: "job.completed" as const,
      payload: {
        event: "job.completed" as const,
        timestamp: new Date(now).toISOString(),
        data: {},
        metadata: {},
      },
      maxAttempts: 5,
    });
    const [old, young] = [crypto.randomUUID(), crypto.randomUUID()];
    await base.webhooks.enqueue([delivery(old)]);
    now += 7 * 24 * 3_600_000 + 1000; // a week and a second later (the default ceiling is 7 days)
    await base.webhooks.enqueue([delivery(young)]);
    const worker = soniq.worker({ deliverWebhooks: false });
    await worker.start();
    await eventually(async () => expect((await soniq.webhooks.delivery(old))?.status).toBe("failed"));
    await worker.stop();
    expect(ages[0]).toBe(7 * 24 * 3_600_000);
    const ended = await soniq.webhooks.delivery(old);
    expect(ended).toMatchObject({ status: "failed", attempts: 0, nextAttemptAt: null });
    expect(ended?.lastError).toContain("still pending 7d after it was written (webhooks.pendingMaxAgeMs)");
    expect(ended?.updatedAt.getTime()).toBe(now);
    expect((await soniq.webhooks.delivery(young))?.status).toBe("pending");
    expect(await soniq.webhooks.redeliver(old)).toBe(true);
    expect((await soniq.webhooks.delivery(old))?.status).toBe("pending");
  });

  it("webhooks/pending-ceiling-option: pendingMaxAgeMs sets the ceiling; below a minute or not an integer is refused with the field named", async () => {
    let now = Date.now();
    const backend = memoryBackend({ now: () => now });
    const key = "unit-test-key-0123456789";
    const soniq = app(
      { webhooks: { secretKey: key, allowPrivateNetworks: true, pendingMaxAgeMs: 60_000 } },
      backend,
    );
    await soniq.setup();
    const endpoint = await soniq.webhooks.register({
      url: "http://127.0.0.1:9/a",
      events: ["job.completed"],
      secret: "whsec_unit_0123456789",
      active: false, // parked deliveries count too: an endpoint left inactive does not keep them forever
    });
    const id = crypto.randomUUID();
    await backend.webhooks.enqueue([
      {
        id,
        endpointId: endpoint.id,
        event: "job.completed",
        payload: { event: "job.completed", timestamp: new Date(now).toISOString(), data: {}, metadata: {} },
        maxAttempts: 5,
      },
    ]);
    now += 61_000;
    const worker = soniq.worker({ deliverWebhooks: false });
    await worker.start();
    await eventually(async () => expect((await soniq.webhooks.delivery(id))?.status).toBe("failed"));
    await worker.stop();
    expect((await soniq.webhooks.delivery(id))?.lastError).toContain("still pending 1m after it was written");
    for (const pendingMaxAgeMs of [59_999, 1.5e5 + 0.5, "7d"]) {
      const err = caught(
        () =>
          new Soniq({ backend: memoryBackend(), webhooks: { pendingMaxAgeMs: pendingMaxAgeMs as number } }),
      );
      expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
      expect((err as { context: { field: unknown } }).context.field).toBe("webhooks.pendingMaxAgeMs");
      expect((err as Error).message).toContain(
        "webhooks.pendingMaxAgeMs must be an integer of at least 60000",
      );
    }
  });

  it("webhooks/pending-gauge: a sink with recordWebhookPending gets the pending count of every endpoint from the lease holder (0 included) and an empty report from other workers; without it nothing is counted", async () => {
    const base = memoryBackend();
    let counted = 0;
    const backend = overriding(base, "webhooks", {
      countPending: () => {
        counted++;
        return base.webhooks.countPending();
      },
    });
    const reports: WebhookPendingEvent[] = [];
    const metrics = {
      recordJobStart() {},
      recordJobEnd() {},
      recordWebhookPending: (e: WebhookPendingEvent) => {
        reports.push(e);
      },
    };
    const key = "unit-test-key-0123456789";
    const soniq = app({ webhooks: { secretKey: key, allowPrivateNetworks: true }, metrics }, backend);
    await soniq.setup();
    const register = (path: string) =>
      soniq.webhooks.register({
        url: `http://127.0.0.1:9/${path}`,
        events: ["job.completed"],
        secret: "whsec_unit_0123456789",
      });
    const [busy, idle] = [await register("busy"), await register("idle")];
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await base.webhooks.enqueue(
      ids.map((id) => ({
        id,
        endpointId: busy.id,
        event: "job.completed" as const,
        payload: {
          event: "job.completed" as const,
          timestamp: new Date().toISOString(),
          data: {},
          metadata: {},
        },
        maxAttempts: 1,
      })),
    );
    const [claimed] = await base.webhooks.claimDue({ limit: 1, leaseMs: 60_000 });
    const gaveUp = { attempt: 1, delayMs: 0, lastError: "refused", responseStatus: null, responseBody: null };
    await base.webhooks.recordAttempt({ ...gaveUp, id: claimed?.id as string, status: "failed" });
    const holder = soniq.worker({ deliverWebhooks: false });
    await holder.start();
    await eventually(() => expect(reports.length).toBeGreaterThan(0));
    const byEndpoint = Object.fromEntries(
      (reports[0]?.endpoints ?? []).map((e) => [e.endpointId, e.pending]),
    );
    expect(byEndpoint).toEqual({ [busy.id]: 2, [idle.id]: 0 });
    const other = soniq.worker({ deliverWebhooks: false });
    const seen = reports.length;
    await other.start();
    await eventually(() => expect(reports.slice(seen).some((r) => r.endpoints.length === 0)).toBe(true));
    await Promise.all([other.stop(), holder.stop()]);

    const before = counted;
    const quiet = app({ webhooks: { secretKey: key } }, backend);
    const worker = quiet.worker({ deliverWebhooks: false });
    await worker.start();
    await worker.stop();
    expect(counted).toBe(before);
  });
});
