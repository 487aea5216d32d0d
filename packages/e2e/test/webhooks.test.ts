/**
 * Webhooks end to end on every backend, against a local receiver on 127.0.0.1: each event the runtime fires
 * is delivered once, signed; a receiver failing twice gets it on the third attempt (same delivery id); one
 * that stays down ends `failed` and gets it again on `redeliver`; the secret is never stored or shown in
 * plain text; bad input is refused with typed errors and writes nothing.
 */

import { randomUUID } from "node:crypto";
import {
  PermanentError,
  Soniq,
  type SoniqOptions,
  verifyWebhookSignature,
  type WebhookEvent,
} from "@soniq/core";
import { manualClock } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, eventually, matrixHarness, uniqueName } from "./runtime-support.js";
import { type Receiver, receiver, SECRET, SECRET_KEY } from "./webhooks-support.js";

const FAST = { heartbeatIntervalMs: 50, staleAfterMs: 2000, maintenanceIntervalMs: 50, pollIntervalMs: 50 };

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))("webhooks on %s", (_name, make) => {
  const h = matrixHarness(make);

  async function app(options: Partial<SoniqOptions> = {}): Promise<Soniq> {
    const soniq = new Soniq({
      backend: h.kind.create(),
      webhooks: { secretKey: SECRET_KEY, allowPrivateNetworks: true },
      ...options,
    });
    h.defer(() => soniq.close());
    await soniq.setup();
    return soniq;
  }

  async function listening(statuses?: number[]): Promise<Receiver> {
    const r = await receiver(statuses);
    h.defer(() => r.close());
    return r;
  }

  it("webhooks/each-event-delivered-once-signed: every runtime event reaches the endpoint once, with a valid signature and the documented body", async () => {
    const r = await listening();
    // Half past the current hour, not now: the scheduler fires a tick that is only a little late (within its
    // check interval and a grace) instead of recording it missed, so started in the first two minutes of an hour
    // the 2 h + 1 min advance below left the last hourly tick fired, one schedule.missed instead of two.
    const clock = manualClock(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 30 * 60_000);
    const soniq = await app({ clock });
    const events: WebhookEvent[] = [
      "job.completed",
      "job.failed",
      "job.retried",
      "job.dead_letter",
      "job.resurrected",
      "queue.backlog",
      "schedule.missed",
    ];
    const endpoint = await soniq.webhooks.register({
      url: r.url,
      events,
      secret: SECRET,
      headers: { "x-team": "ops" },
      retry: { delaysMs: [20] },
    });
    const queue = h.queue;
    const backlogged = uniqueName("backlog");
    let deadRuns = 0;
    soniq.job("hooks.ok", async () => ({ sent: true }), { queue });
    soniq.job(
      "hooks.flaky",
      async (_args, ctx) => {
        if (ctx.attempt === 1) throw new Error("first try fails");
        return "second try";
      },
      { queue, maxAttempts: 2, retry: { delaysMs: [10] } },
    );
    soniq.job(
      "hooks.dead",
      async () => {
        deadRuns++;
        if (deadRuns === 1) throw new PermanentError("card declined");
        return "replayed fine";
      },
      { queue },
    );
    await soniq.queues.configure(backlogged, { lagAlertMs: 1 }, { create: true });
    await h.started(soniq.worker({ queues: [queue], ...FAST }));
    await soniq.jobs.enqueue("hooks.ok", { to: "a" });
    await soniq.jobs.enqueue("hooks.flaky", {});
    const dead = await soniq.jobs.enqueue("hooks.dead", { card: "4242" });
    await soniq.jobs.enqueue("hooks.ok", {}, { queue: backlogged });
    await eventually(async () => expect(await soniq.deadLetters.get(dead.id)).not.toBeNull(), 10_000);
    const replayed = await soniq.deadLetters.replay(dead.id);

    // schedule.missed: a scheduler runs, stops, and the next one finds the ticks nobody ran.
    soniq.schedules.declare("hooks.ok", { cron: "0 * * * *", catchUp: "none", name: "hooks.hourly" });
    const first = soniq.scheduler({ checkIntervalMs: 60_000 });
    await first.start();
    await first.stop();
    await clock.advance(2 * 3_600_000 + 60_000);
    const second = soniq.scheduler({ checkIntervalMs: 60_000 });
    await second.start();
    await second.stop();

    await eventually(() => {
      for (const event of events) expect(r.requests.map((q) => q.event)).toContain(event);
    }, 15_000);
    await eventually(async () => {
      const pending = await soniq.webhooks.deliveries({ endpointId: endpoint.id, status: "pending" });
      expect(pending).toEqual([]);
    }, 10_000);
    const stored = await soniq.webhooks.deliveries({ endpointId: endpoint.id, limit: 1000 });
    expect(stored.every((d) => d.status === "delivered" && d.attempts === 1)).toBe(true);
    // Once each: one request per delivery row, no delivery id twice.
    expect(r.requests.map((q) => q.deliveryId).sort()).toEqual(stored.map((d) => d.id).sort());
    expect(r.signedWith(SECRET)).toHaveLength(r.requests.length);
    expect(r.signedWith("another-secret-entirely")).toHaveLength(0);
    // The delivery id and the event are signed: a captured request re-sent as another delivery, or as
    // another event, does not verify.
    for (const q of r.requests) {
      const check = {
        payload: q.body,
        signature: q.headers["x-webhook-signature"] as string,
        timestamp: q.headers["x-webhook-timestamp"] as string,
        deliveryId: q.deliveryId,
        event: q.event,
        secret: SECRET,
      };
      expect(verifyWebhookSignature(check)).toBe(true);
      expect(verifyWebhookSignature({ ...check, deliveryId: randomUUID() })).toBe(false);
      expect(
        verifyWebhookSignature({ ...check, event: q.event === "job.failed" ? "job.retried" : "job.failed" }),
      ).toBe(false);
    }
    for (const q of r.requests) {
      expect(Object.keys(q.payload).sort()).toEqual(["data", "event", "metadata", "timestamp"]);
      expect(q.payload.event).toBe(q.event);
      expect(q.headers["x-team"]).toBe("ops");
      expect(q.headers["content-type"]).toBe("application/json");
    }
    const byEvent = (e: string) => r.requests.filter((q) => q.event === e).map((q) => q.payload.data);
    expect(byEvent("job.completed")).toContainEqual(
      expect.objectContaining({
        jobName: "hooks.ok",
        args: { to: "a" },
        result: { sent: true },
        traceId: null,
      }),
    );
    expect(byEvent("job.retried")).toEqual([
      expect.objectContaining({
        jobName: "hooks.flaky",
        error: expect.stringContaining("first try fails"),
        nextAttempt: 2,
      }),
    ]);
    expect(byEvent("job.failed")).toContainEqual(
      expect.objectContaining({ jobName: "hooks.flaky", willRetry: true }),
    );
    expect(byEvent("job.failed")).toContainEqual(
      expect.objectContaining({ jobName: "hooks.dead", willRetry: false, retryInMs: null }),
    );
    expect(byEvent("job.dead_letter")).toEqual([
      expect.objectContaining({ jobId: dead.id, reason: "permanent_failure" }),
    ]);
    expect(byEvent("job.resurrected")).toEqual([
      expect.objectContaining({ deadLetterId: dead.id, newJobId: replayed, resurrectionCount: 1 }),
    ]);
    expect(byEvent("queue.backlog")).toEqual([
      expect.objectContaining({ queue: backlogged, lagAlertMs: 1, lagMs: expect.any(Number) }),
    ]);
    expect(byEvent("schedule.missed").map((d) => d.schedule)).toEqual(["hooks.hourly", "hooks.hourly"]);
  }, 40_000);

  it("webhooks/third-attempt: a receiver failing twice then answering gets the delivery on the third attempt, same id each time", async () => {
    const r = await listening([500, 503, 204]);
    const soniq = await app();
    const endpoint = await soniq.webhooks.register({
      url: r.url,
      events: ["job.completed"],
      secret: SECRET,
      retry: { backoff: "fixed", delayMs: 30 },
    });
    soniq.job("hooks.ok", async () => 1, { queue: h.queue });
    await h.started(soniq.worker({ queues: [h.queue], ...FAST }));
    await soniq.jobs.enqueue("hooks.ok", {});
    const [delivered] = await eventually(async () => {
      const rows = await soniq.webhooks.deliveries({ endpointId: endpoint.id, status: "delivered" });
      expect(rows).toHaveLength(1);
      return rows;
    }, 10_000);
    expect(delivered?.attempts).toBe(3);
    expect(delivered?.responseStatus).toBe(204);
    expect(r.requests.map((q) => q.deliveryId)).toEqual([delivered?.id, delivered?.id, delivered?.id]);
    expect(r.signedWith(SECRET)).toHaveLength(3);
  }, 20_000);

  it("webhooks/run-once-delivers: runOnce sends the deliveries its jobs made before it returns; with deliverWebhooks false it leaves them pending", async () => {
    const r = await listening();
    const soniq = await app();
    const endpoint = await soniq.webhooks.register({ url: r.url, events: ["job.completed"], secret: SECRET });
    soniq.job("hooks.ok", async () => 1, { queue: h.queue });
    const first = await soniq.jobs.enqueue("hooks.ok", {});
    expect(await soniq.worker({ queues: [h.queue], deliverWebhooks: false }).runOnce()).toBe(1);
    const pending = await soniq.webhooks.deliveries({ endpointId: endpoint.id });
    expect(pending.map((d) => [d.status, d.attempts])).toEqual([["pending", 0]]);
    expect(r.requests).toEqual([]);
    const second = await soniq.jobs.enqueue("hooks.ok", {});
    expect(await soniq.worker({ queues: [h.queue] }).runOnce()).toBe(1);
    // Returned: both deliveries are sent (the earlier one was due too), none left for a started worker.
    const rows = await soniq.webhooks.deliveries({ endpointId: endpoint.id });
    expect(rows.map((d) => d.status)).toEqual(["delivered", "delivered"]);
    expect(r.requests.map((q) => q.payload.data.jobId).sort()).toEqual([first.id, second.id].sort());
  });

  it("webhooks/failed-then-redeliver: a receiver that stays down ends failed after maxAttempts; redeliver sends it again (audited)", async () => {
    const r = await listening([503]);
    const soniq = await app();
    const endpoint = await soniq.webhooks.register({
      url: r.url,
      events: ["job.completed"],
      secret: SECRET,
      maxAttempts: 2,
      retry: { delaysMs: [20] },
    });
    soniq.job("hooks.ok", async () => 1, { queue: h.queue });
    await h.started(soniq.worker({ queues: [h.queue], ...FAST }));
    await soniq.jobs.enqueue("hooks.ok", {});
    const [failed] = await eventually(async () => {
      const rows = await soniq.webhooks.deliveries({ endpointId: endpoint.id, status: "failed" });
      expect(rows).toHaveLength(1);
      return rows;
    }, 10_000);
    expect(failed).toMatchObject({
      attempts: 2,
      lastError: "HTTP 503",
      responseStatus: 503,
      nextAttemptAt: null,
    });
    expect(r.requests).toHaveLength(2);
    r.answer(200);
    expect(await soniq.webhooks.redeliver(failed?.id as string, { actor: "ops-tina" })).toBe(true);
    await eventually(async () => {
      expect((await soniq.webhooks.delivery(failed?.id as string))?.status).toBe("delivered");
    }, 10_000);
    expect(r.requests.map((q) => q.deliveryId)).toEqual([failed?.id, failed?.id, failed?.id]);
    const unknown = "01a2344e-0000-7000-8000-000000000000";
    expect(await soniq.webhooks.redeliver(unknown)).toBe(false);
    const audit = await soniq.audit.list({ action: "webhook.redeliver" });
    const mine = audit.filter((a) => a.target === failed?.id || a.target === unknown);
    expect(mine.map((a) => [a.actor, a.target, a.outcome])).toEqual([
      ["api", unknown, "not_found_or_pending"],
      ["ops-tina", failed?.id, "ok"],
    ]);
  }, 20_000);

  it("webhooks/stop-aborts-attempts: stopping a worker aborts an attempt to a hung receiver; it counts as failed and retries", async () => {
    const r = await listening([0]);
    const soniq = await app();
    const endpoint = await soniq.webhooks.register({
      url: r.url,
      events: ["job.completed"],
      secret: SECRET,
      timeoutMs: 60_000,
    });
    soniq.job("hooks.ok", async () => 1, { queue: h.queue });
    const worker = soniq.worker({ queues: [h.queue], ...FAST });
    await worker.start();
    await soniq.jobs.enqueue("hooks.ok", {});
    await eventually(() => expect(r.requests).toHaveLength(1), 10_000);
    const started = performance.now();
    await worker.stop();
    expect(performance.now() - started).toBeLessThan(10_000);
    const [row] = await soniq.webhooks.deliveries({ endpointId: endpoint.id });
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: "aborted: the worker stopped" });
  }, 20_000);

  it("webhooks/secret-never-plain: the secret is stored encrypted and appears in no API answer, audit row or log line", async () => {
    const lines: string[] = [];
    const log = (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg]));
    const soniq = await app({ logger: { debug: log, info: log, warn: log, error: log } });
    const r = await listening([500]);
    const endpoint = await soniq.webhooks.register({
      url: r.url,
      events: ["job.completed"],
      secret: SECRET,
      maxAttempts: 1,
    });
    await soniq.webhooks.update(endpoint.id, { secret: `${SECRET}-rotated` });
    expect(await soniq.webhooks.test(endpoint.id)).toMatchObject({ ok: false, status: 500 });
    soniq.job("hooks.ok", async () => 1, { queue: h.queue });
    await h.started(soniq.worker({ queues: [h.queue], ...FAST }));
    await soniq.jobs.enqueue("hooks.ok", {});
    await eventually(async () => {
      expect(await soniq.webhooks.deliveries({ endpointId: endpoint.id, status: "failed" })).toHaveLength(1);
    }, 10_000);
    const stored = await soniq.backend.webhooks.getEndpoint(endpoint.id);
    expect(stored?.secretCipher).toMatch(/^v1\./);
    const everything = JSON.stringify([
      stored,
      await soniq.webhooks.list(),
      await soniq.webhooks.get(endpoint.id),
      await soniq.webhooks.deliveries({ endpointId: endpoint.id }),
      await soniq.audit.list(),
      lines,
    ]);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain('rotated"');
    expect(await soniq.webhooks.get(endpoint.id)).not.toHaveProperty("secretCipher");
    expect((await soniq.webhooks.get(endpoint.id))?.hasSecret).toBe(true);
    // The rotated secret signs: the receiver's requests verify with it, not with the first.
    expect(r.signedWith(`${SECRET}-rotated`)).toHaveLength(r.requests.length);
    expect(r.signedWith(SECRET)).toHaveLength(0);
    // A receiver in the middle of the rotation holds both secrets and accepts the requests.
    expect(r.signedWith([SECRET, `${SECRET}-rotated`])).toHaveLength(r.requests.length);
  }, 20_000);

  it("webhooks/bad-input-typed-errors: a bad URL, an unknown event, a private target and a missing secretKey are refused; nothing is written", async () => {
    const strict = await app({ webhooks: { secretKey: SECRET_KEY } });
    const noKey = await app({ webhooks: { allowPrivateNetworks: true } });
    const good = { url: "https://example.com/hooks", events: ["job.failed" as const], secret: SECRET };
    const before = await strict.webhooks.list();
    const auditBefore = await strict.audit.list({ action: "webhook.register" });
    const cases: [Soniq, unknown, string, string][] = [
      [strict, { ...good, url: "not a url" }, "SONIQ_INVALID_ARGUMENT", "url"],
      [strict, { ...good, url: "ftp://example.com/x" }, "SONIQ_INVALID_ARGUMENT", "url"],
      [strict, { ...good, url: "https://user:pw@example.com/x" }, "SONIQ_INVALID_ARGUMENT", "url"],
      [strict, { ...good, events: ["job.exploded"] }, "SONIQ_INVALID_ARGUMENT", "events"],
      [strict, { ...good, events: [] }, "SONIQ_INVALID_ARGUMENT", "events"],
      [strict, { ...good, secret: "short" }, "SONIQ_INVALID_ARGUMENT", "secret"],
      [strict, { ...good, headers: { "X-Webhook-Signature": "x" } }, "SONIQ_INVALID_ARGUMENT", "headers"],
      [strict, { ...good, retry: () => 5 }, "SONIQ_INVALID_ARGUMENT", "retry"],
      [strict, { ...good, url: "http://127.0.0.1:9/hooks" }, "SONIQ_WEBHOOK_TARGET_REFUSED", "url"],
      [strict, { ...good, url: "http://[::1]:9/hooks" }, "SONIQ_WEBHOOK_TARGET_REFUSED", "url"],
      [strict, { ...good, url: "http://169.254.169.254/latest" }, "SONIQ_WEBHOOK_TARGET_REFUSED", "url"],
      [strict, { ...good, url: "http://10.1.2.3/x" }, "SONIQ_WEBHOOK_TARGET_REFUSED", "url"],
      [strict, { ...good, url: "http://localhost:9/hooks" }, "SONIQ_WEBHOOK_TARGET_REFUSED", "url"],
      [noKey, good, "SONIQ_INVALID_OPTIONS", "webhooks.secretKey"],
    ];
    for (const [soniq, input, code, field] of cases) {
      const error = await soniq.webhooks.register(input as never).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(input)).toMatchObject({
        code,
        context: expect.objectContaining({ field }),
      });
    }
    expect(await strict.webhooks.list()).toEqual(before);
    expect(await strict.audit.list({ action: "webhook.register" })).toEqual(auditBefore);
    expect(() => new Soniq({ backend: h.kind.create(), webhooks: { secretKey: "short" } })).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_OPTIONS" }),
    );
  });
});
