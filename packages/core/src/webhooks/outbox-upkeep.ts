/**
 * The delivery outbox's upkeep, run by each worker's maintenance pass (worker/upkeep.ts). The worker holding the
 * maintenance lease ends the deliveries still pending `webhooks.pendingMaxAgeMs` after they were written (failed,
 * with a last error that says why, so they stay visible and redeliverable), then deletes the finished ones past
 * `webhooks.retentionMs`. Every worker reports the pending count per endpoint to a metrics sink that takes it
 * (`recordWebhookPending`): the holder counts, the others report none, so the sum over processes is the count.
 */
import type { Runtime } from "../app/runtime.js";
import { durationWords } from "../ops/words.js";

/** The last error of a delivery ended for staying pending longer than `maxAgeMs`. */
export function pendingExpiredError(maxAgeMs: number): string {
  return (
    `not delivered: still pending ${durationWords(maxAgeMs)} after it was written (webhooks.pendingMaxAgeMs), ` +
    "so it was ended as failed, whatever attempts it had left; redeliver it to send it again"
  );
}

/** Ends the pending deliveries past their ceiling, then prunes the finished ones past retention. */
export async function tidyOutbox(rt: Runtime): Promise<void> {
  if (!rt.backend.supports("webhooks")) return;
  const { pendingMaxAgeMs, retentionMs } = rt.options.webhooks;
  const expired = await rt.backend.webhooks.expirePending(
    pendingMaxAgeMs,
    pendingExpiredError(pendingMaxAgeMs),
  );
  if (expired > 0) {
    rt.logger.warn(
      { expired, pendingMaxAgeMs },
      "webhook deliveries still pending past webhooks.pendingMaxAgeMs were ended as failed (redeliver them to send them again)",
    );
  }
  const pruned = await rt.backend.webhooks.prune(retentionMs);
  if (pruned > 0) rt.logger.debug({ pruned }, "deleted finished webhook deliveries past their retention");
}

/**
 * Reports the pending deliveries per endpoint to the metrics sink, when it takes them: counted by the lease
 * holder (`counts`: true) for every endpoint it knows, an empty report from the others.
 */
export async function reportPending(rt: Runtime, counts: boolean): Promise<void> {
  if (!rt.metrics.wantsWebhookPending || !rt.backend.supports("webhooks")) return;
  if (!counts) {
    rt.metrics.webhookPending({ endpoints: [] });
    return;
  }
  const pending = new Map<string, number>(rt.webhooks.endpoints.map((e) => [e.id, 0]));
  for (const row of await rt.backend.webhooks.countPending()) pending.set(row.endpointId, row.pending);
  rt.metrics.webhookPending({
    endpoints: [...pending].map(([endpointId, n]) => ({ endpointId, pending: n })),
  });
}
