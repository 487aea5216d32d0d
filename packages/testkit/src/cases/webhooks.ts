/**
 * The webhooks facet: endpoints with their audit rows, and the delivery outbox. Deliveries an event makes
 * ride in the write that makes the event (settle, replay, a recorded tick) and are written only when that
 * write applies; a claim takes a due delivery once until its lease passes; an attempt's outcome is fenced by
 * its attempt number; redelivery gives a finished delivery a fresh budget. Cases share storage on some
 * backends, so each looks only at its own endpoint's deliveries.
 */
import {
  auditRecord,
  type NewWebhookDelivery,
  type StoredWebhookEndpoint,
  type WebhookDelivery,
} from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import type { CaseContext } from "../types.js";
import { deadLetter, deepEqual, done, equal, processingJob, requeue, sorted } from "./helpers.js";
import { declared } from "./schedules.js";

function endpointRow(
  ctx: CaseContext,
  overrides: Partial<StoredWebhookEndpoint> = {},
): StoredWebhookEndpoint {
  const at = new Date();
  return {
    id: ctx.id(),
    url: "https://hooks.example.com/soniq",
    events: ["job.completed", "job.dead_letter"],
    headers: { "x-team": "ops" },
    description: null,
    active: true,
    maxAttempts: 3,
    timeoutMs: 5000,
    retry: { backoff: "exponential", delayMs: 10_000, maxDelayMs: 600_000, jitter: true },
    secretCipher: "v1.iv.tag.body",
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

export async function endpoint(ctx: CaseContext, overrides: Partial<StoredWebhookEndpoint> = {}) {
  const row = endpointRow(ctx, overrides);
  await ctx.backend.webhooks.createEndpoint(row, auditRecord("webhook.register", "kit", row.id, null));
  return row;
}

function delivery(
  ctx: CaseContext,
  endpointId: string,
  event: NewWebhookDelivery["event"] = "job.completed",
) {
  return {
    id: ctx.id(),
    endpointId,
    event,
    payload: { event, timestamp: "2026-01-01T00:00:00.000Z", data: { n: 1 }, metadata: { source: "kit" } },
    maxAttempts: 3,
  } satisfies NewWebhookDelivery;
}

async function deliveriesOf(ctx: CaseContext, endpointId: string): Promise<WebhookDelivery[]> {
  return ctx.backend.webhooks.listDeliveries({ endpointId, status: null, event: null, limit: 1000 });
}

/** Claims everything due and returns this endpoint's share (other cases' rows may be due too). */
async function claimMine(ctx: CaseContext, endpointId: string, leaseMs = 60_000): Promise<WebhookDelivery[]> {
  const taken = await ctx.backend.webhooks.claimDue({ limit: 1000, leaseMs });
  return taken.filter((d) => d.endpointId === endpointId);
}

export const webhookCases = [
  defineCase({
    id: "webhooks/endpoints-crud-with-audit",
    title:
      "createEndpoint, updateEndpoint, removeEndpoint store what they are given with their audit rows; get and list read it back; removal takes the deliveries",
    async run(ctx) {
      const e = await endpoint(ctx);
      const got = await ctx.backend.webhooks.getEndpoint(e.id);
      deepEqual(
        got && { ...got, createdAt: null, updatedAt: null },
        { ...e, createdAt: null, updatedAt: null },
        "getEndpoint must return the endpoint as created (every field, secretCipher included)",
      );
      equal(
        (await ctx.backend.webhooks.listEndpoints()).some((x) => x.id === e.id),
        true,
        "listEndpoints must include the new endpoint",
      );
      const update = auditRecord("webhook.update", "kit", e.id, null);
      const changed = await ctx.backend.webhooks.updateEndpoint(
        e.id,
        { active: false, events: ["job.failed"], description: "paused by kit" },
        update,
      );
      deepEqual(
        changed && [changed.active, changed.events, changed.description, changed.url, changed.secretCipher],
        [false, ["job.failed"], "paused by kit", e.url, e.secretCipher],
        "updateEndpoint must merge the patch (omitted keys keep their values) and return the row",
      );
      const missing = auditRecord("webhook.update", "kit", ctx.id(), null);
      equal(
        await ctx.backend.webhooks.updateEndpoint(ctx.id(), { active: true }, missing),
        null,
        "updateEndpoint of an unknown id returns null",
      );
      await ctx.backend.webhooks.enqueue([delivery(ctx, e.id)]);
      const remove = auditRecord("webhook.remove", "kit", e.id, null);
      equal(await ctx.backend.webhooks.removeEndpoint(e.id, remove), true, "removeEndpoint must apply");
      equal(
        await ctx.backend.webhooks.removeEndpoint(e.id, remove),
        false,
        "a second remove changes nothing",
      );
      equal(await ctx.backend.webhooks.getEndpoint(e.id), null, "a removed endpoint reads as null");
      equal((await deliveriesOf(ctx, e.id)).length, 0, "removing an endpoint removes its deliveries");
      const audit = await ctx.backend.audit.list({ action: null, since: null, limit: 1000 });
      deepEqual(
        sorted(audit.filter((r) => r.target === e.id).map((r) => r.action)),
        ["webhook.register", "webhook.remove", "webhook.update"],
        "each applied endpoint write leaves its audit row, the failed ones none",
      );
    },
  }),
  defineCase({
    id: "webhooks/outbox-commits-with-settle",
    title:
      "a settlement's deliveries are written with it when it applies (done, requeue, dead letter) and not at all when it does not",
    async run(ctx) {
      const e = await endpoint(ctx);
      const a = await processingJob(ctx);
      const b = await processingJob(ctx);
      const c = await processingJob(ctx);
      const da = delivery(ctx, e.id, "job.completed");
      const db = delivery(ctx, e.id, "job.retried");
      const dc = delivery(ctx, e.id, "job.dead_letter");
      const late = delivery(ctx, e.id, "job.completed");
      const applied = await ctx.backend.runs.settle([
        { ...done(a), deliveries: [da] },
        { ...requeue(b, { delayMs: 60_000 }), deliveries: [db] },
        { ...deadLetter(c), deliveries: [dc] },
        // A stale attempt: not applied, so its delivery must not be written.
        { ...done({ id: a.id, attempts: a.attempts + 7 }), deliveries: [late] },
      ]);
      deepEqual(applied, [true, true, true, false], "the three fenced items apply, the stale one does not");
      const rows = await deliveriesOf(ctx, e.id);
      deepEqual(
        sorted(rows.map((r) => r.id)),
        sorted([da.id, db.id, dc.id]),
        "exactly the applied items' deliveries must be stored",
      );
      const one = rows.find((r) => r.id === da.id);
      deepEqual(
        one && [one.status, one.attempts, one.maxAttempts, one.event, one.payload, one.endpointId],
        ["pending", 0, 3, "job.completed", da.payload, e.id],
        "a stored delivery is pending, with no attempt yet, its payload as given",
      );
    },
  }),
  defineCase({
    id: "webhooks/outbox-commits-with-replay-and-tick",
    title:
      "a replay's and a recorded tick's deliveries are written with them, and a duplicate tick writes none",
    async run(ctx) {
      const e = await endpoint(ctx);
      const job = await processingJob(ctx);
      await ctx.backend.runs.settle([deadLetter(job)]);
      const resurrected = delivery(ctx, e.id, "job.resurrected");
      const request = {
        newId: ctx.id(),
        queue: null,
        priority: null,
        scheduledAt: null,
        traceId: null,
        traceContext: null,
      };
      const newId = await ctx.backend.deadLetters.replay(job.id, { ...request, deliveries: [resurrected] });
      equal(newId, request.newId, "the replay must apply");
      const none = delivery(ctx, e.id, "job.resurrected");
      await ctx.backend.deadLetters.replay(ctx.id(), { ...request, newId: ctx.id(), deliveries: [none] });
      const d = await declared(ctx);
      const missed = delivery(ctx, e.id, "schedule.missed");
      const tick = {
        scheduleName: d.name,
        tickAt: new Date("2026-01-01T00:05:00Z"),
        outcome: "missed" as const,
        reason: "no scheduler ran",
        job: null,
        nextRunAt: new Date("2026-01-01T00:06:00Z"),
        manual: false,
      };
      const first = await ctx.backend.schedules.recordTick({ ...tick, deliveries: [missed] });
      equal(first.status, "recorded", "the missed tick must be recorded");
      const again = await ctx.backend.schedules.recordTick({ ...tick, deliveries: [delivery(ctx, e.id)] });
      equal(again.status, "duplicate", "recording the same tick again is a duplicate");
      deepEqual(
        sorted((await deliveriesOf(ctx, e.id)).map((r) => r.id)),
        sorted([resurrected.id, missed.id]),
        "the replay's and the first tick's deliveries are stored; the missed replay's and the duplicate's are not",
      );
    },
  }),
  defineCase({
    id: "webhooks/claim-record-redeliver",
    title:
      "claimDue takes a due delivery once (attempts + 1) until its lease passes; recordAttempt is fenced by the attempt; failed and delivered ones redeliver with a fresh budget",
    async run(ctx) {
      const e = await endpoint(ctx);
      const d = delivery(ctx, e.id);
      const other = delivery(ctx, e.id);
      await ctx.backend.webhooks.enqueue([d, other]);
      const taken = await claimMine(ctx, e.id);
      deepEqual(
        sorted(taken.map((x) => `${x.id}:${x.attempts}`)),
        sorted([`${d.id}:1`, `${other.id}:1`]),
        "both due deliveries are claimed, each with attempts 1",
      );
      equal(
        (await claimMine(ctx, e.id)).length,
        0,
        "claimed deliveries are not due again within their lease",
      );
      const result = { lastError: "HTTP 503", responseStatus: 503, responseBody: "busy" };
      equal(
        await ctx.backend.webhooks.recordAttempt({
          id: d.id,
          attempt: 2,
          status: "delivered",
          delayMs: 0,
          ...result,
        }),
        false,
        "an attempt number that does not match is not stored",
      );
      equal(
        await ctx.backend.webhooks.recordAttempt({
          id: d.id,
          attempt: 1,
          status: "pending",
          delayMs: 0,
          ...result,
        }),
        true,
        "a failed attempt with attempts left is stored as pending",
      );
      const [retry] = await claimMine(ctx, e.id);
      deepEqual(
        retry && [retry.id, retry.attempts, retry.lastError, retry.responseStatus],
        [d.id, 2, "HTTP 503", 503],
        "a retry due now is claimed again, attempts 2, the last error kept",
      );
      const last = { lastError: "timed out", responseStatus: null, responseBody: null };
      await ctx.backend.webhooks.recordAttempt({
        id: d.id,
        attempt: 2,
        status: "failed",
        delayMs: 0,
        ...last,
      });
      const ok = { lastError: null, responseStatus: 204, responseBody: "" };
      await ctx.backend.webhooks.recordAttempt({
        id: other.id,
        attempt: 1,
        status: "delivered",
        delayMs: 0,
        ...ok,
      });
      const failed = await ctx.backend.webhooks.getDelivery(d.id);
      deepEqual(
        failed && [failed.status, failed.attempts, failed.nextAttemptAt, failed.lastError],
        ["failed", 2, null, "timed out"],
        "a failed delivery keeps its attempts and last error, with no next attempt",
      );
      const delivered = await ctx.backend.webhooks.getDelivery(other.id);
      equal(delivered?.status, "delivered", "a delivered attempt marks the delivery delivered");
      equal(delivered?.deliveredAt instanceof Date, true, "a delivered delivery has deliveredAt");
      const statuses = async (status: "failed" | "delivered" | "pending") =>
        (await ctx.backend.webhooks.listDeliveries({ endpointId: e.id, status, event: null, limit: 10 })).map(
          (x) => x.id,
        );
      deepEqual(await statuses("failed"), [d.id], "listDeliveries filters by status");
      const audit = auditRecord("webhook.redeliver", "kit", d.id, null);
      equal(await ctx.backend.webhooks.redeliver(d.id, audit), true, "a failed delivery redelivers");
      equal(await ctx.backend.webhooks.redeliver(d.id, audit), false, "a pending one does not");
      equal(await ctx.backend.webhooks.redeliver(ctx.id(), audit), false, "an unknown id does not");
      const [again] = await claimMine(ctx, e.id);
      deepEqual(
        again && [again.id, again.attempts, again.status],
        [d.id, 1, "pending"],
        "a redelivered delivery is due now with a fresh budget (same id, attempts 1 once claimed)",
      );
    },
  }),
  defineCase({
    id: "webhooks/claim-fair-per-endpoint",
    title:
      "claimDue takes at most perEndpoint deliveries of each endpoint, oldest due first, skips the endpoints it is told to skip and never takes an inactive endpoint's deliveries (parked until it is active again)",
    async run(ctx) {
      const busy = await endpoint(ctx);
      const quiet = await endpoint(ctx);
      const skipped = await endpoint(ctx);
      const parked = await endpoint(ctx, { active: false });
      const busyRows = Array.from({ length: 10 }, () => delivery(ctx, busy.id));
      await ctx.backend.webhooks.enqueue(busyRows);
      await ctx.backend.webhooks.enqueue([delivery(ctx, quiet.id)]);
      await ctx.backend.webhooks.enqueue([delivery(ctx, skipped.id), delivery(ctx, parked.id)]);
      const mine = new Set([busy.id, quiet.id, skipped.id, parked.id]);
      const claim = async () =>
        (
          await ctx.backend.webhooks.claimDue({
            limit: 1000,
            leaseMs: 60_000,
            perEndpoint: 2,
            exceptEndpoints: [skipped.id],
          })
        ).filter((d) => mine.has(d.endpointId));
      const first = await claim();
      deepEqual(
        sorted(first.map((d) => d.endpointId)),
        sorted([busy.id, busy.id, quiet.id]),
        "one claim takes two of the busy endpoint's ten and the quiet endpoint's one; none of the skipped or inactive endpoint's",
      );
      const second = await claim();
      deepEqual(
        second.map((d) => d.endpointId),
        [busy.id, busy.id],
        "the next claim takes the busy endpoint's next two",
      );
      const limited = await ctx.backend.webhooks.claimDue({
        limit: 1,
        leaseMs: 60_000,
        perEndpoint: 2,
        exceptEndpoints: [],
      });
      equal(limited.length, 1, "limit still bounds the whole claim");
      const reactivate = auditRecord("webhook.update", "kit", parked.id, null);
      await ctx.backend.webhooks.updateEndpoint(parked.id, { active: true }, reactivate);
      equal(
        (await claimMine(ctx, parked.id)).length,
        1,
        "an inactive endpoint's pending delivery is claimed once the endpoint is active again",
      );
    },
  }),
  defineCase({
    id: "webhooks/concurrent-claims-never-share",
    title:
      "concurrent claimDue calls never return the same delivery: 4 claimers racing over 40 due deliveries take each exactly once, with attempts 1",
    async run(ctx) {
      const e = await endpoint(ctx);
      const rows = Array.from({ length: 40 }, () => delivery(ctx, e.id));
      await ctx.backend.webhooks.enqueue(rows);
      const taken: WebhookDelivery[] = [];
      // Rounds of 4 concurrent claims of 7 each, until a round takes nothing (other cases' due rows go too).
      for (let round = 0; round < 100; round++) {
        const claims = await Promise.all(
          [1, 2, 3, 4].map(() => ctx.backend.webhooks.claimDue({ limit: 7, leaseMs: 60_000 })),
        );
        if (claims.every((c) => c.length === 0)) break;
        for (const c of claims) taken.push(...c.filter((d) => d.endpointId === e.id));
      }
      const counts = new Map<string, number>();
      for (const d of taken) counts.set(d.id, (counts.get(d.id) ?? 0) + 1);
      deepEqual(
        [...counts].filter(([, n]) => n > 1),
        [],
        "no delivery may be returned by two claimDue calls (each listed with how many claims took it)",
      );
      deepEqual(
        sorted(taken.map((d) => d.id)),
        sorted(rows.map((d) => d.id)),
        "the concurrent claims together take every due delivery",
      );
      deepEqual([...new Set(taken.map((d) => d.attempts))], [1], "each delivery is claimed once: attempts 1");
    },
  }),
  defineCase({
    id: "webhooks/list-deliveries-filters",
    title:
      "listDeliveries filters by event, status and endpoint, alone and together, while other events, statuses and endpoints hold matching rows",
    async run(ctx) {
      const e = await endpoint(ctx);
      const other = await endpoint(ctx);
      const completed = [delivery(ctx, e.id, "job.completed"), delivery(ctx, e.id, "job.completed")];
      const failed = delivery(ctx, e.id, "job.failed");
      const dead = delivery(ctx, e.id, "job.dead_letter");
      const elsewhere = delivery(ctx, other.id, "job.completed");
      await ctx.backend.webhooks.enqueue([...completed, failed, dead, elsewhere]);
      await claimMine(ctx, e.id);
      const attempt = { attempt: 1, delayMs: 0, lastError: null, responseStatus: 204, responseBody: "" };
      equal(
        await ctx.backend.webhooks.recordAttempt({
          ...attempt,
          id: (completed[0] as NewWebhookDelivery).id,
          status: "delivered",
        }),
        true,
        "setup: one job.completed delivery delivered",
      );
      const list = async (
        endpointId: string | null,
        event: string | null,
        status: WebhookDelivery["status"] | null = null,
      ) =>
        sorted(
          (await ctx.backend.webhooks.listDeliveries({ endpointId, status, event, limit: 1000 })).map(
            (d) => d.id,
          ),
        );
      deepEqual(
        await list(e.id, "job.completed"),
        sorted(completed.map((d) => d.id)),
        'listDeliveries({ endpointId, event: "job.completed" }) must return that endpoint\'s job.completed deliveries only',
      );
      deepEqual(
        await list(e.id, "job.failed"),
        [failed.id],
        'listDeliveries({ endpointId, event: "job.failed" }) must return the one job.failed delivery',
      );
      deepEqual(
        await list(e.id, "job.completed", "pending"),
        [(completed[1] as NewWebhookDelivery).id],
        "event and status together: the pending job.completed delivery only",
      );
      deepEqual(
        await list(e.id, "job.retried"),
        [],
        "an event with no delivery at this endpoint lists nothing",
      );
      const anyEndpoint = await ctx.backend.webhooks.listDeliveries({
        endpointId: null,
        status: null,
        event: "job.dead_letter",
        limit: 1000,
      });
      deepEqual(
        [...new Set(anyEndpoint.map((d) => d.event))],
        ["job.dead_letter"],
        'listDeliveries({ event: "job.dead_letter" }) over every endpoint must return job.dead_letter deliveries only',
      );
      deepEqual(
        sorted(
          (
            await ctx.backend.webhooks.listDeliveries({
              endpointId: null,
              status: null,
              event: "job.completed",
              limit: 1000,
            })
          )
            .filter((d) => d.endpointId === e.id || d.endpointId === other.id)
            .map((d) => d.id),
        ),
        sorted([...completed, elsewhere].map((d) => d.id)),
        "the event filter alone spans endpoints: both endpoints' job.completed deliveries",
      );
    },
  }),
  defineCase({
    id: "webhooks/prune-finished-deliveries",
    title:
      "webhooks.prune deletes the delivered and failed deliveries last written before its cutoff and returns how many; pending ones stay, whatever their age",
    async run(ctx) {
      const e = await endpoint(ctx);
      const sent = delivery(ctx, e.id);
      const failed = delivery(ctx, e.id);
      const leased = delivery(ctx, e.id);
      const retrying = delivery(ctx, e.id);
      await ctx.backend.webhooks.enqueue([sent, failed, leased, retrying]);
      equal((await claimMine(ctx, e.id)).length, 4, "setup: the four deliveries are claimed");
      const attempt = { attempt: 1, delayMs: 0, lastError: null, responseStatus: null, responseBody: null };
      const outcomes = [
        { ...attempt, id: sent.id, status: "delivered" as const },
        { ...attempt, id: failed.id, status: "failed" as const },
        { ...attempt, id: retrying.id, status: "pending" as const },
      ];
      for (const outcome of outcomes) {
        equal(await ctx.backend.webhooks.recordAttempt(outcome), true, `setup: ${outcome.status} recorded`);
      }
      const ids = async () => sorted((await deliveriesOf(ctx, e.id)).map((d) => d.id));
      await ctx.backend.webhooks.prune(3_600_000);
      deepEqual(
        await ids(),
        sorted([sent.id, failed.id, leased.id, retrying.id]),
        "deliveries written within the hour are kept by prune(1 hour)",
      );
      let pruned = 0;
      await eventually(async () => {
        pruned += await ctx.backend.webhooks.prune(0);
        deepEqual(
          await ids(),
          sorted([leased.id, retrying.id]),
          "prune(0) deletes the delivered and the failed delivery; the leased and the retrying one stay pending",
        );
      });
      equal(pruned >= 2, true, `prune returns how many it deleted (at least this case's two, got ${pruned})`);
      equal(
        await ctx.backend.webhooks.getDelivery(sent.id),
        null,
        "a pruned delivery is gone for getDelivery too",
      );
    },
  }),
  defineCase({
    id: "webhooks/update-endpoint-guarded-by-secret",
    title:
      "updateEndpoint with a guard writes (and audits) only while the stored secretCipher is the guard's; a mismatch changes nothing and returns null",
    async run(ctx) {
      const e = await endpoint(ctx, { secretCipher: "v1.first.tag.body" });
      const resealed = { secretCipher: "v2.k2.iv.tag.body" };
      const stale = auditRecord("webhook.reseal", "kit", e.id, { fromKeyId: "k0", toKeyId: "k2" });
      equal(
        await ctx.backend.webhooks.updateEndpoint(e.id, resealed, stale, {
          secretCipher: "v1.other.tag.body",
        }),
        null,
        "a guard naming another secretCipher than the stored one must not apply (null)",
      );
      equal(
        (await ctx.backend.webhooks.getEndpoint(e.id))?.secretCipher,
        "v1.first.tag.body",
        "a write whose guard did not match leaves the secret as it was",
      );
      const fresh = auditRecord("webhook.reseal", "kit", e.id, { fromKeyId: null, toKeyId: "k2" });
      const written = await ctx.backend.webhooks.updateEndpoint(e.id, resealed, fresh, {
        secretCipher: "v1.first.tag.body",
      });
      equal(written?.secretCipher, resealed.secretCipher, "a guard naming the stored secretCipher applies");
      equal(
        await ctx.backend.webhooks.updateEndpoint(ctx.id(), resealed, fresh, resealed),
        null,
        "a guarded write of an unknown id returns null",
      );
      const audit = await ctx.backend.audit.list({ action: "webhook.reseal", since: null, limit: 1000 });
      deepEqual(
        audit.filter((r) => r.target === e.id).map((r) => r.id),
        [fresh.id],
        "only the applied guarded write leaves its audit row",
      );
    },
  }),
  defineCase({
    id: "webhooks/expire-pending-past-ceiling",
    title:
      "expirePending ends as failed the pending deliveries (due, leased or retrying) created before its cutoff, with the given last error and no next attempt, and returns how many; finished ones keep theirs",
    async run(ctx) {
      const e = await endpoint(ctx);
      const sent = delivery(ctx, e.id);
      const failed = delivery(ctx, e.id);
      const leased = delivery(ctx, e.id);
      const retrying = delivery(ctx, e.id);
      const due = delivery(ctx, e.id);
      await ctx.backend.webhooks.enqueue([sent, failed, leased, retrying]);
      equal((await claimMine(ctx, e.id)).length, 4, "setup: the four deliveries are claimed");
      const attempt = { attempt: 1, delayMs: 0, responseStatus: 503, responseBody: "busy" };
      const outcomes = [
        { ...attempt, id: sent.id, status: "delivered" as const, lastError: null },
        { ...attempt, id: failed.id, status: "failed" as const, lastError: "HTTP 503" },
        { ...attempt, id: retrying.id, status: "pending" as const, lastError: "HTTP 503" },
      ];
      for (const outcome of outcomes) {
        equal(await ctx.backend.webhooks.recordAttempt(outcome), true, `setup: ${outcome.status} recorded`);
      }
      await ctx.backend.webhooks.enqueue([due]);
      const reason = "not delivered: still pending past the ceiling (kit)";
      equal(
        await ctx.backend.webhooks.expirePending(3_600_000, reason),
        0,
        "expirePending(1 hour) ends nothing written within the hour",
      );
      let ended = 0;
      await eventually(async () => {
        ended += await ctx.backend.webhooks.expirePending(0, reason);
        const rows = new Map((await deliveriesOf(ctx, e.id)).map((d) => [d.id, d]));
        const shape = (id: string) => {
          const d = rows.get(id);
          return d && [d.status, d.nextAttemptAt, d.lastError];
        };
        deepEqual(
          [leased, retrying, due].map((d) => shape(d.id)),
          [
            ["failed", null, reason],
            ["failed", null, reason],
            ["failed", null, reason],
          ],
          "expirePending(0) ends every pending delivery (leased, retrying and due) as failed, with its last error and no next attempt",
        );
        deepEqual(
          [sent, failed].map((d) => shape(d.id)),
          [
            ["delivered", null, null],
            ["failed", null, "HTTP 503"],
          ],
          "finished deliveries are left as they were",
        );
      });
      equal(
        ended >= 3,
        true,
        `expirePending returns how many it ended (at least this case's three, got ${ended})`,
      );
      const retried = await ctx.backend.webhooks.getDelivery(retrying.id);
      deepEqual(
        retried && [retried.attempts, retried.responseStatus],
        [1, 503],
        "an ended delivery keeps its attempts and its last response",
      );
      const audit = auditRecord("webhook.redeliver", "kit", due.id, null);
      equal(
        await ctx.backend.webhooks.redeliver(due.id, audit),
        true,
        "an ended delivery redelivers like any failed one",
      );
      equal(
        await ctx.backend.webhooks.recordAttempt({
          ...attempt,
          id: leased.id,
          status: "delivered",
          lastError: null,
        }),
        false,
        "an ended delivery is no longer pending: its claimed attempt's outcome is not stored",
      );
    },
  }),
  defineCase({
    id: "webhooks/count-pending-per-endpoint",
    title:
      "countPending returns, per endpoint with any, how many deliveries are pending (due, leased or retrying); delivered and failed ones are not counted",
    async run(ctx) {
      const busy = await endpoint(ctx);
      const quiet = await endpoint(ctx);
      const idle = await endpoint(ctx);
      const rows = [1, 2, 3, 4].map(() => delivery(ctx, busy.id));
      const [done, failed] = [delivery(ctx, quiet.id), delivery(ctx, quiet.id)];
      await ctx.backend.webhooks.enqueue([...rows, done, failed]);
      const claimed = await claimMine(ctx, quiet.id);
      equal(claimed.length, 2, "setup: the quiet endpoint's two deliveries are claimed");
      const attempt = { attempt: 1, delayMs: 0, lastError: null, responseStatus: null, responseBody: null };
      await ctx.backend.webhooks.recordAttempt({ ...attempt, id: done.id, status: "delivered" });
      await ctx.backend.webhooks.recordAttempt({ ...attempt, id: failed.id, status: "failed" });
      await ctx.backend.webhooks.enqueue([delivery(ctx, quiet.id)]);
      const counts = new Map(
        (await ctx.backend.webhooks.countPending()).map((c) => [c.endpointId, c.pending]),
      );
      deepEqual(
        [counts.get(busy.id), counts.get(quiet.id), counts.has(idle.id)],
        [4, 1, false],
        "4 pending for the busy endpoint (claimed ones count), 1 for the quiet one (its delivered and failed do not), none listed for an endpoint without pending deliveries",
      );
      equal(
        [...counts.values()].every((n) => typeof n === "number" && Number.isInteger(n) && n >= 1),
        true,
        "each count is an integer of at least 1",
      );
    },
  }),
] as const;
