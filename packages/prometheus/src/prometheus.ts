/**
 * `@soniq/prometheus`: a `MetricsSink` (from `@soniq/core/plugin`) on prom-client, a peer dependency the
 * application installs, so the metrics land in the registry its `/metrics` endpoint already serves.
 *
 * Metrics (prefix default `soniq`):
 * - `<p>_jobs_started_total{queue,job_name}` counter
 * - `<p>_jobs_completed_total{queue,job_name,status}` counter (status: done, failed, dead_letter, snoozed, cancelled, nacked)
 * - `<p>_job_duration_seconds{queue,job_name,status}` histogram
 * - `<p>_jobs_in_progress{queue,job_name}` gauge
 * - `<p>_claimed_jobs_total` counter and `<p>_claim_duration_seconds` histogram (one observation per claim)
 * - `<p>_events_total{event}` counter (shutdown_nack, worker_stale, write_failed)
 * - `<p>_webhook_deliveries_pending{endpoint_id}` gauge, set at each maintenance pass by the worker holding the
 *   maintenance lease (other workers' series are cleared, so a sum over processes counts each delivery once)
 * Metrics already registered under the same names are reused, so several instances can share a registry.
 */

import type {
  ClaimEvent,
  JobEndEvent,
  JobStartEvent,
  MetricsSink,
  WebhookPendingEvent,
} from "@soniq/core/plugin";
import { Counter, register as defaultRegistry, Gauge, Histogram, type Registry } from "prom-client";

export interface PrometheusSinkOptions {
  /** Where metrics are registered. Default: prom-client's default registry. */
  registry?: Registry;
  /** Metric name prefix. Default "soniq". */
  prefix?: string;
  /** Job duration histogram buckets, in seconds. */
  buckets?: number[];
}

export const DEFAULT_DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

export interface PrometheusSink extends MetricsSink {
  readonly registry: Registry;
  recordClaim(event: ClaimEvent): void;
  recordEvent(name: string, payload: Record<string, unknown>): void;
  recordWebhookPending(event: WebhookPendingEvent): void;
}

function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export function prometheusSink(options: PrometheusSinkOptions = {}): PrometheusSink {
  const registry = options.registry ?? defaultRegistry;
  const p = options.prefix ?? "soniq";
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(p)) throw new TypeError(`Invalid Prometheus metric prefix "${p}".`);
  const registers = [registry];
  const started = reuse(
    registry,
    `${p}_jobs_started_total`,
    () =>
      new Counter({
        name: `${p}_jobs_started_total`,
        help: "Job runs started.",
        labelNames: ["queue", "job_name"],
        registers,
      }),
  );
  const completed = reuse(
    registry,
    `${p}_jobs_completed_total`,
    () =>
      new Counter({
        name: `${p}_jobs_completed_total`,
        help: "Job runs finished, by outcome.",
        labelNames: ["queue", "job_name", "status"],
        registers,
      }),
  );
  const duration = reuse(
    registry,
    `${p}_job_duration_seconds`,
    () =>
      new Histogram({
        name: `${p}_job_duration_seconds`,
        help: "Job run time, by outcome.",
        labelNames: ["queue", "job_name", "status"],
        buckets: options.buckets ?? DEFAULT_DURATION_BUCKETS,
        registers,
      }),
  );
  const inProgress = reuse(
    registry,
    `${p}_jobs_in_progress`,
    () =>
      new Gauge({
        name: `${p}_jobs_in_progress`,
        help: "Job runs in progress.",
        labelNames: ["queue", "job_name"],
        registers,
      }),
  );
  const claimed = reuse(
    registry,
    `${p}_claimed_jobs_total`,
    () =>
      new Counter({
        name: `${p}_claimed_jobs_total`,
        help: "Jobs returned by claims.",
        registers,
      }),
  );
  const claimDuration = reuse(
    registry,
    `${p}_claim_duration_seconds`,
    () =>
      new Histogram({
        name: `${p}_claim_duration_seconds`,
        help: "Claim round-trip time.",
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
        registers,
      }),
  );
  const events = reuse(
    registry,
    `${p}_events_total`,
    () =>
      new Counter({
        name: `${p}_events_total`,
        help: "Runtime events (shutdown_nack, worker_stale, write_failed).",
        labelNames: ["event"],
        registers,
      }),
  );
  const webhookPending = reuse(
    registry,
    `${p}_webhook_deliveries_pending`,
    () =>
      new Gauge({
        name: `${p}_webhook_deliveries_pending`,
        help: "Webhook deliveries pending, per endpoint (reported by the worker holding the maintenance lease).",
        labelNames: ["endpoint_id"],
        registers,
      }),
  );
  return {
    registry,
    recordJobStart(e: JobStartEvent) {
      const labels = { queue: e.queue, job_name: e.jobName };
      started.inc(labels);
      inProgress.inc(labels);
    },
    recordJobEnd(e: JobEndEvent) {
      inProgress.dec({ queue: e.queue, job_name: e.jobName });
      const labels = { queue: e.queue, job_name: e.jobName, status: e.status };
      completed.inc(labels);
      duration.observe(labels, e.durationMs / 1000);
    },
    recordClaim(e: ClaimEvent) {
      claimed.inc(e.count);
      claimDuration.observe(e.durationMs / 1000);
    },
    recordEvent(name: string) {
      events.inc({ event: name });
    },
    recordWebhookPending(e: WebhookPendingEvent) {
      // Each report is the whole picture: a removed endpoint's series goes, and so does every series of a
      // worker that no longer holds the maintenance lease (it reports an empty list).
      webhookPending.reset();
      for (const { endpointId, pending } of e.endpoints)
        webhookPending.set({ endpoint_id: endpointId }, pending);
    },
  };
}
