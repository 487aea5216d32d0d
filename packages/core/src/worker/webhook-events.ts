/**
 * The webhook events a run's outcome makes, as delivery rows that ride in its settlement (written in the
 * same transaction, only when it applies). With no endpoint for an event this is an empty array and the
 * settlement is left as it was: the hot path pays one array check.
 *
 * | outcome                       | events                          |
 * | ----------------------------- | ------------------------------- |
 * | done                          | job.completed                   |
 * | retry                         | job.failed, job.retried         |
 * | dead letter after a run       | job.failed, job.dead_letter     |
 * | dead letter without a run     | job.dead_letter                 |
 */

import type { Runtime } from "../app/runtime.js";
import type { Job } from "../common/types.js";
import type { NewWebhookDelivery, Settlement } from "../contract/index.js";
import { completedData, deadLetterData, failedData, retriedData } from "../webhooks/payloads.js";

const NONE: readonly NewWebhookDelivery[] = Object.freeze([]);

export function withDeliveries<S extends Settlement>(settlement: S, rows: readonly NewWebhookDelivery[]): S {
  if (rows.length > 0) settlement.deliveries = rows;
  return settlement;
}

export function completedEvents(rt: Runtime, job: Job, result: unknown): readonly NewWebhookDelivery[] {
  if (!rt.webhooks.hasEndpoints) return NONE;
  return rt.webhooks.rows("job.completed", () => completedData(job, result, rt.options.redact));
}

export function retryEvents(
  rt: Runtime,
  job: Job,
  error: string,
  delayMs: number,
): readonly NewWebhookDelivery[] {
  if (!rt.webhooks.hasEndpoints) return NONE;
  const redact = rt.options.redact;
  return [
    ...rt.webhooks.rows("job.failed", () => failedData(job, error, delayMs, redact)),
    ...rt.webhooks.rows("job.retried", () => retriedData(job, error, delayMs, redact)),
  ];
}

export function deadLetterEvents(
  rt: Runtime,
  job: Job,
  reason: string,
  error: string | null,
  ran: boolean,
): readonly NewWebhookDelivery[] {
  if (!rt.webhooks.hasEndpoints) return NONE;
  const redact = rt.options.redact;
  const failed = ran
    ? rt.webhooks.rows("job.failed", () => failedData(job, error ?? "", null, redact))
    : NONE;
  return [
    ...failed,
    ...rt.webhooks.rows("job.dead_letter", () => deadLetterData(job, reason, error, redact)),
  ];
}
