import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { prometheusSink } from "../src/index.js";

describe("metrics/prometheus", () => {
  it("counts starts and ends by status, observes durations, tracks in-progress", async () => {
    const registry = new Registry();
    const sink = prometheusSink({ registry, prefix: "t" });
    const base = { jobId: "1", jobName: "a.b", queue: "default", attempt: 1 };
    sink.recordJobStart(base);
    sink.recordJobStart({ ...base, jobId: "2" });
    sink.recordJobEnd({ ...base, status: "done", durationMs: 12 });
    sink.recordJobEnd({
      ...base,
      jobId: "2",
      status: "dead_letter",
      durationMs: 3,
      reason: "permanent_failure",
    });
    sink.recordClaim({ count: 2, durationMs: 1 });
    sink.recordEvent("shutdown_nack", {});
    const text = await registry.metrics();
    expect(text).toContain('t_jobs_started_total{queue="default",job_name="a.b"} 2');
    expect(text).toContain('t_jobs_completed_total{queue="default",job_name="a.b",status="done"} 1');
    expect(text).toContain('t_jobs_completed_total{queue="default",job_name="a.b",status="dead_letter"} 1');
    expect(text).toContain('t_jobs_in_progress{queue="default",job_name="a.b"} 0');
    expect(text).toContain('t_job_duration_seconds_count{queue="default",job_name="a.b",status="done"} 1');
    expect(text).toContain("t_claimed_jobs_total 2");
    expect(text).toContain('t_events_total{event="shutdown_nack"} 1');
    // A second sink on the same registry reuses the metrics instead of failing.
    expect(() => prometheusSink({ registry, prefix: "t" })).not.toThrow();
  });

  it("metrics/prometheus-webhook-pending: the pending deliveries gauge per endpoint follows each report; an empty report clears it", async () => {
    const registry = new Registry();
    const sink = prometheusSink({ registry, prefix: "t" });
    sink.recordWebhookPending({
      endpoints: [
        { endpointId: "e1", pending: 3 },
        { endpointId: "e2", pending: 0 },
      ],
    });
    let text = await registry.metrics();
    expect(text).toContain("# TYPE t_webhook_deliveries_pending gauge");
    expect(text).toContain('t_webhook_deliveries_pending{endpoint_id="e1"} 3');
    expect(text).toContain('t_webhook_deliveries_pending{endpoint_id="e2"} 0');
    sink.recordWebhookPending({ endpoints: [{ endpointId: "e1", pending: 1 }] }); // e2 was removed
    text = await registry.metrics();
    expect(text).toContain('t_webhook_deliveries_pending{endpoint_id="e1"} 1');
    expect(text).not.toContain('endpoint_id="e2"');
    sink.recordWebhookPending({ endpoints: [] }); // this worker no longer holds the maintenance lease
    expect(await registry.metrics()).not.toMatch(/t_webhook_deliveries_pending\{/);
  });
});
