/**
 * A delivery's attempt budget as the deliverer spends it (issue 43): core sends attempt `attempts` (the count
 * the claim returned) and stores `failed` once `attempts >= maxAttempts`, else `pending`. That rule gives
 * exactly `maxAttempts` attempts only if each claim counts one attempt, a stored `pending` counts none, the
 * delivery keeps its own `maxAttempts` and stays claimable until the last attempt is stored. A backend that
 * counts an attempt twice (or refuses the last one) fails a delivery one attempt early.
 */
import type { NewWebhookDelivery, WebhookDelivery } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { deepEqual, equal } from "./helpers.js";
import { endpoint } from "./webhooks.js";

function delivery(ctx: CaseContext, endpointId: string, maxAttempts: number): NewWebhookDelivery {
  return {
    id: ctx.id(),
    endpointId,
    event: "job.completed",
    payload: { event: "job.completed", timestamp: "2026-01-01T00:00:00.000Z", data: {}, metadata: {} },
    maxAttempts,
  };
}

/** Claims everything due and returns this delivery if it was taken (other cases' rows may be due too). */
async function claimOne(ctx: CaseContext, id: string): Promise<WebhookDelivery | undefined> {
  const taken = await ctx.backend.webhooks.claimDue({ limit: 1000, leaseMs: 60_000 });
  return taken.find((d) => d.id === id);
}

/**
 * Claims the delivery and stores a failed attempt each time, deciding `pending` or `failed` as core does,
 * until a claim no longer takes it. Returns the attempt numbers the claims returned.
 */
async function failEveryAttempt(ctx: CaseContext, id: string, cap: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < cap; i++) {
    const taken = await claimOne(ctx, id);
    if (taken === undefined) break;
    seen.push(taken.attempts);
    const last = taken.attempts >= taken.maxAttempts;
    const stored = await ctx.backend.webhooks.recordAttempt({
      id,
      attempt: taken.attempts,
      status: last ? "failed" : "pending",
      delayMs: 0,
      lastError: `HTTP 503 (attempt ${taken.attempts})`,
      responseStatus: 503,
      responseBody: null,
    });
    equal(
      stored,
      true,
      `attempt ${taken.attempts}'s outcome must be stored (the fence is the claim's count)`,
    );
    if (!last) {
      const row = await ctx.backend.webhooks.getDelivery(id);
      deepEqual(
        row && [row.status, row.attempts],
        ["pending", taken.attempts],
        `after failed attempt ${taken.attempts} of ${taken.maxAttempts}, the delivery is pending with attempts ${taken.attempts} (a stored retry counts no attempt)`,
      );
    }
  }
  return seen;
}

export const webhookAttemptCases = [
  defineCase({
    id: "webhooks/failed-only-after-max-attempts",
    title:
      "a delivery with maxAttempts N is claimed N times (attempts 1..N, its own maxAttempts, not its endpoint's) and is failed only after the Nth failed attempt, never after N - 1",
    async run(ctx) {
      // The endpoint's maxAttempts differs from the delivery's: the delivery's own budget is the one spent.
      const e = await endpoint(ctx, { maxAttempts: 5 });
      for (const n of [1, 2, 3]) {
        const d = delivery(ctx, e.id, n);
        await ctx.backend.webhooks.enqueue([d]);
        const seen = await failEveryAttempt(ctx, d.id, n + 3);
        deepEqual(
          seen,
          Array.from({ length: n }, (_, i) => i + 1),
          `a delivery with maxAttempts ${n} must be claimed exactly ${n} times, with attempts 1..${n}`,
        );
        const row = await ctx.backend.webhooks.getDelivery(d.id);
        deepEqual(
          row && [row.status, row.attempts, row.maxAttempts, row.nextAttemptAt, row.lastError],
          ["failed", n, n, null, `HTTP 503 (attempt ${n})`],
          `after its ${n}th failed attempt the delivery is failed, attempts ${n}, no next attempt, the last error kept`,
        );
      }
    },
  }),
] as const;
