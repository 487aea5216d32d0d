/**
 * The example traced end to end (what SONIQ_EXAMPLE_TRACING=console prints, captured in memory): one trace per
 * order request, from the HTTP span through the `send` of the order's jobs to each job's `process` run.
 */
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";
import { createTracing, tracingFromEnv } from "../src/tracing.js";
import { eventually, tempDir } from "./support.js";

describe("example/tracing", () => {
  const dir = tempDir();
  const exporter = new InMemorySpanExporter();
  let app: App;
  let base = "";
  beforeAll(async () => {
    app = await createApp({
      database: { kind: "sqlite", location: dir.file() },
      workerOptions: { concurrency: 5, pollIntervalMs: 50 },
      jobs: { reviewDelayMs: 0 },
      tracing: createTracing(exporter),
    });
    base = await app.listen(0);
  });
  afterAll(async () => {
    await app.close();
    dir.remove();
  });

  it("example/tracing-end-to-end: the request, the enqueue and every run share one trace", async () => {
    const res = await fetch(`${base}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ customer: "Ada", email: "ada@example.com", totalCents: 4250 }),
    });
    const { jobIds } = (await res.json()) as { jobIds: string[] };
    expect(jobIds).toHaveLength(4);
    const runs = await eventually(() => {
      const done = exporter
        .getFinishedSpans()
        .filter((s) => s.name.startsWith("process ") && s.attributes["soniq.job.outcome"] === "done");
      expect(done.map((s) => s.attributes["messaging.message.id"]).sort()).toEqual([...jobIds].sort());
      return done;
    });
    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === "POST /orders") as ReadableSpan;
    expect(request).toBeDefined();
    const traceId = request.spanContext().traceId;
    const send = spans.find((s) => s.name.startsWith("send ")) as ReadableSpan;
    expect(send.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(send.attributes["messaging.batch.message_count"]).toBe(4);
    for (const run of runs) expect(run.spanContext().traceId).toBe(traceId);
    for (const id of jobIds) expect((await app.soniq.jobs.get(id))?.traceId).toBe(traceId);
  });

  it("example/tracing-env: SONIQ_EXAMPLE_TRACING is console or unset", () => {
    expect(tracingFromEnv({})).toBeNull();
    expect(() => tracingFromEnv({ SONIQ_EXAMPLE_TRACING: "jaeger" })).toThrow(/console or unset/);
  });
});
