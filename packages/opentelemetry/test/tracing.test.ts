/**
 * One trace from a request through `send <queue>` and `process <queue>`, on the memory backend and on SQLite
 * (the stored carrier goes through a real table): retries, replays, schedule fires, "link" mode, metrics, and
 * nothing stored or exported without the plugin.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Attributes,
  type Context,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SamplingResult,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { memoryBackend } from "@soniq/backend-memory";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { type Backend, PermanentError, REDACTED, type RedactOption, Soniq } from "@soniq/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type OpenTelemetryOptions, openTelemetry } from "../src/index.js";

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  contextManager.disable();
  context.disable();
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const BACKENDS: [string, () => Backend<unknown>][] = [
  ["memory", () => memoryBackend() as Backend<unknown>],
  [
    "sqlite",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "soniq-otel-"));
      dirs.push(dir);
      return sqliteBackend({ filename: join(dir, "jobs.db") }) as unknown as Backend<unknown>;
    },
  ],
];

interface Setup {
  soniq: Soniq;
  exporter: InMemorySpanExporter;
  tracer: ReturnType<TracerProvider["getTracer"]>;
  reader: TestReader;
}

const open: Soniq[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** `options` null: no plugin; a function: the plugin's options from the instance (`soniq.options.redact`). */
async function setup(
  makeBackend: () => Backend<unknown>,
  options: Partial<OpenTelemetryOptions> | ((soniq: Soniq) => Partial<OpenTelemetryOptions>) | null = {},
  redact?: RedactOption,
  sampler?: Sampler,
) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    ...(sampler ? { sampler } : {}),
  });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const soniq = new Soniq({ backend: makeBackend(), ...(redact ? { redact } : {}) });
  open.push(soniq);
  await soniq.setup();
  if (options !== null) {
    const resolved = typeof options === "function" ? options(soniq) : options;
    soniq.use(openTelemetry({ tracerProvider, meterProvider, ...resolved }));
  }
  return { soniq, exporter, tracer: tracerProvider.getTracer("test"), reader } satisfies Setup;
}

/** Runs the worker until `done()` holds (bounded): retries are due at once but claimed on a later pass. */
async function drain(soniq: Soniq, done: () => Promise<boolean>): Promise<void> {
  const worker = soniq.worker({ pollIntervalMs: 10 });
  for (let i = 0; i < 50; i++) {
    await worker.runOnce();
    if (await done()) return;
  }
  throw new Error("the jobs did not finish within 50 passes");
}

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const only = (spans: ReadableSpan[], name: string): ReadableSpan => {
  const found = byName(spans, name);
  expect(found, `exactly one "${name}" span`).toHaveLength(1);
  return found[0] as ReadableSpan;
};

/** The SDK's default sampler with every root sampled out, noting the name of every span it is asked about. */
class CountingSampler implements Sampler {
  readonly asked: string[] = [];
  readonly #inner = new ParentBasedSampler({ root: new AlwaysOffSampler() });
  shouldSample(
    ctx: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    this.asked.push(name);
    return this.#inner.shouldSample(ctx, traceId, name, kind, attributes, links);
  }
  toString(): string {
    return "CountingSampler";
  }
}

/** Runs `fn` inside a fresh active span (an HTTP request, say) and ends it. */
async function inSpan<T>(tracer: Setup["tracer"], name: string, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, ROOT_CONTEXT);
  try {
    return await context.with(trace.setSpan(ROOT_CONTEXT, span), () => fn(span));
  } finally {
    span.end();
  }
}

describe.each(BACKENDS)("opentelemetry on %s", (_, makeBackend) => {
  it("otel/one-trace: request -> send <queue> (PRODUCER) -> process <queue> (CONSUMER) -> the handler's spans", async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend);
    soniq.job("emails.send", async () => {
      tracer.startSpan("smtp").end();
      return "sent";
    });
    const { id } = await inSpan(tracer, "POST /signup", () => soniq.jobs.enqueue("emails.send", { to: "a" }));
    await drain(soniq, async () => (await soniq.jobs.get(id))?.status === "done");
    const spans = exporter.getFinishedSpans();
    const request = only(spans, "POST /signup");
    const send = only(spans, "send default");
    const process = only(spans, "process default");
    const smtp = only(spans, "smtp");
    const traceId = request.spanContext().traceId;
    for (const span of [send, process, smtp]) expect(span.spanContext().traceId).toBe(traceId);
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(send.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(smtp.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
    expect(send.attributes).toMatchObject({
      "messaging.system": "soniq",
      "messaging.destination.name": "default",
      "messaging.operation.type": "send",
      "messaging.message.id": id,
      "soniq.job.name": "emails.send",
    });
    expect(process.attributes).toMatchObject({
      "messaging.system": "soniq",
      "messaging.destination.name": "default",
      "messaging.operation.type": "process",
      "messaging.message.id": id,
      "soniq.job.name": "emails.send",
      "soniq.job.attempt": 1,
      "soniq.job.outcome": "done",
    });
    const job = await soniq.jobs.get(id);
    expect(job?.traceId).toBe(traceId);
    expect(job?.traceContext?.traceparent).toBe(`00-${traceId}-${send.spanContext().spanId}-01`);
  });

  it("otel/batch: enqueueMany is one send span with the batch size; each job's run is its child", async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend);
    const job = soniq.job("reports.build", async () => null);
    const results = await inSpan(tracer, "batch", () =>
      soniq.jobs.enqueueMany([0, 1, 2].map((n) => ({ job, args: { n } }))),
    );
    await drain(soniq, async () => (await soniq.jobs.stats()).done === 3);
    const spans = exporter.getFinishedSpans();
    const send = only(spans, "send default");
    expect(send.attributes["messaging.batch.message_count"]).toBe(3);
    const runs = byName(spans, "process default");
    expect(runs.map((s) => s.attributes["messaging.message.id"]).sort()).toEqual(
      results.map((r) => r.id).sort(),
    );
    for (const run of runs) expect(run.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
  });

  it("otel/flow-steps: a flow's start is one send; every step, released later too, runs in that trace", async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend);
    soniq.job("orders.step", async () => null);
    const flow = await inSpan(tracer, "POST /orders", () =>
      soniq.flows.start({
        steps: { a: { job: "orders.step" }, b: { job: "orders.step", dependsOn: ["a"] } },
      }),
    );
    await drain(soniq, async () => (await soniq.flows.get(flow.id))?.state === "succeeded");
    const spans = exporter.getFinishedSpans();
    const request = only(spans, "POST /orders");
    const send = only(spans, "send default");
    expect(send.attributes["messaging.batch.message_count"]).toBe(2);
    const runs = byName(spans, "process default");
    expect(runs.map((r) => r.attributes["messaging.message.id"]).sort()).toEqual(
      [flow.jobs.a, flow.jobs.b].sort(),
    );
    for (const run of runs) {
      expect(run.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(run.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    }
    expect((await soniq.jobs.get(flow.jobs.b as string))?.traceId).toBe(request.spanContext().traceId);
  });

  it("otel/retries: each attempt is a process span under the same send; a failed one records the error", async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend);
    let calls = 0;
    soniq.job(
      "flaky.call",
      async () => {
        calls++;
        if (calls === 1) throw new Error("upstream 503");
        return "ok";
      },
      { retry: { delaysMs: [0] } },
    );
    const { id } = await inSpan(tracer, "request", () => soniq.jobs.enqueue("flaky.call", {}));
    await drain(soniq, async () => (await soniq.jobs.get(id))?.status === "done");
    const spans = exporter.getFinishedSpans();
    const send = only(spans, "send default");
    const runs = byName(spans, "process default").sort(
      (a, b) => Number(a.attributes["soniq.job.attempt"]) - Number(b.attributes["soniq.job.attempt"]),
    );
    expect(runs.map((s) => [s.attributes["soniq.job.attempt"], s.attributes["soniq.job.outcome"]])).toEqual([
      [1, "retry"],
      [2, "done"],
    ]);
    for (const run of runs) expect(run.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    const [failed, succeeded] = runs as [ReadableSpan, ReadableSpan];
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.events.find((e) => e.name === "exception")?.attributes?.["exception.message"]).toBe(
      "upstream 503",
    );
    expect(succeeded.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it("otel/steps: each durable step that runs is a `step <name>` span under its run's span; a stored one has none; a failing one records its error", async () => {
    const { soniq, exporter } = await setup(makeBackend);
    let calls = 0;
    soniq.job(
      "steps.traced",
      async (_: unknown, ctx) => {
        calls++;
        await ctx.step("reserve", () => "seat-4");
        await ctx.step("charge", () => {
          if (calls === 1) throw new Error("declined");
          return "paid";
        });
        return "ok";
      },
      { retry: { delaysMs: [0] } },
    );
    const { id } = await soniq.jobs.enqueue("steps.traced", {});
    await drain(soniq, async () => (await soniq.jobs.get(id))?.status === "done");
    const spans = exporter.getFinishedSpans();
    const runs = byName(spans, "process default").sort(
      (a, b) => Number(a.attributes["soniq.job.attempt"]) - Number(b.attributes["soniq.job.attempt"]),
    );
    const [first, second] = runs as [ReadableSpan, ReadableSpan];
    const reserve = byName(spans, "step reserve");
    expect(reserve.map((s) => s.parentSpanContext?.spanId)).toEqual([first.spanContext().spanId]);
    const charge = byName(spans, "step charge");
    expect(charge.map((s) => [s.parentSpanContext?.spanId, s.status.code])).toEqual([
      [first.spanContext().spanId, SpanStatusCode.ERROR],
      [second.spanContext().spanId, SpanStatusCode.UNSET],
    ]);
    expect(charge[0]?.attributes["soniq.step.name"]).toBe("charge");
  });

  it.each([
    ["given as an option", (s: Soniq) => ({ redact: s.options.redact })],
    ["picked up from the app it is attached to (soniq.use)", {}],
  ] as const)(
    "otel/redact: with the app's redact %s, no span shows a redacted arg's value in an error text, and no stack",
    async (_how, given) => {
      const { soniq, exporter } = await setup(makeBackend, given, ["password"]);
      soniq.job(
        "auth.login",
        async (args: { password: string }) => {
          throw new Error(`login refused for password ${args.password}`);
        },
        { maxAttempts: 2, retry: { delaysMs: [0] } },
      );
      const { id } = await soniq.jobs.enqueue("auth.login", { user: "ann", password: "hunter2-secret" });
      await drain(soniq, async () => (await soniq.deadLetters.get(id)) !== null);
      const runs = byName(exporter.getFinishedSpans(), "process default");
      expect(runs.map((s) => s.attributes["soniq.job.outcome"]).sort()).toEqual(["dead_letter", "retry"]);
      for (const span of exporter.getFinishedSpans()) {
        const shown = JSON.stringify({
          attributes: span.attributes,
          events: span.events.map((e) => [e.name, e.attributes]),
          status: span.status,
          links: span.links.map((l) => l.attributes),
        });
        expect(shown).not.toContain("hunter2-secret");
        expect(shown).not.toContain("exception.stacktrace");
      }
      for (const run of runs) {
        expect(run.status).toEqual({
          code: SpanStatusCode.ERROR,
          message: `Error: login refused for password ${REDACTED}`,
        });
        const exception = run.events.find((e) => e.name === "exception");
        expect(exception?.attributes).toEqual({
          "exception.type": "Error",
          "exception.message": `login refused for password ${REDACTED}`,
        });
      }
    },
  );

  it("otel/replay-links: the dead letter keeps the trace; a replay's send links to it and its run continues the replay", async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend);
    let fail = true;
    soniq.job("payments.capture", async () => {
      if (fail) throw new PermanentError("card declined");
      return "captured";
    });
    const { id } = await inSpan(tracer, "checkout", () => soniq.jobs.enqueue("payments.capture", {}));
    await drain(soniq, async () => (await soniq.deadLetters.get(id)) !== null);
    const dead = await soniq.deadLetters.get(id);
    const firstSend = only(exporter.getFinishedSpans(), "send default");
    expect(dead?.traceId).toBe(firstSend.spanContext().traceId);
    const firstRun = only(exporter.getFinishedSpans(), "process default");
    expect(firstRun.attributes["soniq.job.outcome"]).toBe("dead_letter");
    expect(firstRun.status.code).toBe(SpanStatusCode.ERROR);
    exporter.reset();
    fail = false;
    const newId = await inSpan(tracer, "operator replay", () => soniq.deadLetters.replay(id));
    await drain(soniq, async () => (await soniq.jobs.get(newId as string))?.status === "done");
    const spans = exporter.getFinishedSpans();
    const operator = only(spans, "operator replay");
    const send = only(spans, "send default");
    const run = only(spans, "process default");
    expect(send.attributes["soniq.send.origin"]).toBe("replay");
    expect(send.parentSpanContext?.spanId).toBe(operator.spanContext().spanId);
    expect(send.links.map((l) => l.context.spanId)).toEqual([firstSend.spanContext().spanId]);
    expect(send.links[0]?.context.traceId).toBe(firstSend.spanContext().traceId);
    expect(run.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect((await soniq.jobs.get(newId as string))?.traceId).toBe(operator.spanContext().traceId);
  });

  it("otel/schedule-fire-is-a-root: a schedule's fire starts its own trace, even inside a request", async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend);
    const job = soniq.job("digest.send", async () => null);
    soniq.schedules.declare(job, { every: 3_600_000, name: "digest" });
    const id = await inSpan(tracer, "admin click", () => soniq.schedules.trigger("digest"));
    await drain(soniq, async () => (await soniq.jobs.get(id))?.status === "done");
    const spans = exporter.getFinishedSpans();
    const send = only(spans, "send default");
    expect(send.attributes["soniq.send.origin"]).toBe("schedule");
    expect(send.parentSpanContext).toBeUndefined();
    expect(send.spanContext().traceId).not.toBe(only(spans, "admin click").spanContext().traceId);
    expect(only(spans, "process default").parentSpanContext?.spanId).toBe(send.spanContext().spanId);
  });

  it('otel/link-mode: with parent "link" each run is a new root linking to the send', async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend, { parent: "link" });
    soniq.job("fanout.part", async () => null);
    const { id } = await inSpan(tracer, "request", () => soniq.jobs.enqueue("fanout.part", {}));
    await drain(soniq, async () => (await soniq.jobs.get(id))?.status === "done");
    const spans = exporter.getFinishedSpans();
    const send = only(spans, "send default");
    const run = only(spans, "process default");
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.spanContext().traceId).not.toBe(send.spanContext().traceId);
    expect(run.links.map((l) => l.context.spanId)).toEqual([send.spanContext().spanId]);
  });

  it("otel/metrics: processed runs by outcome, run duration and queue lag go to the meter", async () => {
    const { soniq, reader } = await setup(makeBackend);
    soniq.job("metered.ok", async () => null);
    soniq.job("metered.bad", async () => {
      throw new PermanentError("no");
    });
    await soniq.jobs.enqueue("metered.ok", {});
    await soniq.jobs.enqueue("metered.bad", {});
    await drain(soniq, async () => (await soniq.jobs.stats()).queued === 0);
    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const find = (name: string) => all.find((m) => m.descriptor.name === name);
    const processed = find("soniq.jobs.processed");
    const points = (processed?.dataPoints ?? []).map((p) => [p.attributes["soniq.job.outcome"], p.value]);
    expect(points.sort()).toEqual([
      ["dead_letter", 1],
      ["done", 1],
    ]);
    expect(find("messaging.process.duration")?.dataPoints.length).toBe(2);
    expect(find("soniq.queue.lag")?.dataPoints.length).toBeGreaterThan(0);
  });

  it("otel/sampled-out: a job whose enqueue was sampled out starts no span at its runs or steps; the handler still runs in its trace, unsampled; metrics still count it", async () => {
    const sampler = new CountingSampler();
    const { soniq, exporter, tracer, reader } = await setup(makeBackend, {}, undefined, sampler);
    const seen: { traceId: string; flags: number; recording: boolean }[] = [];
    soniq.job("sampled.out", async (_: unknown, ctx) => {
      const active = trace.getActiveSpan();
      const own = active?.spanContext();
      if (own)
        seen.push({ traceId: own.traceId, flags: own.traceFlags, recording: active?.isRecording() ?? true });
      await ctx.step("reserve", () => "seat-4");
      tracer.startSpan("smtp").end();
      return null;
    });
    // A root enqueue: the sampler decides at its `send` span (out); an enqueue inside a request sampled out
    // upstream: no `send` span is even asked for.
    const first = await soniq.jobs.enqueue("sampled.out", {});
    const upstream: SpanContext = {
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    };
    const second = await context.with(trace.setSpanContext(ROOT_CONTEXT, upstream), () =>
      soniq.jobs.enqueue("sampled.out", {}),
    );
    expect(sampler.asked).toEqual(["send default"]);
    await drain(soniq, async () => (await soniq.jobs.stats()).queued === 0);
    expect(exporter.getFinishedSpans()).toEqual([]);
    // The handler's own span was asked about (and dropped by the parent-based default); the runs' and the
    // steps' spans never were.
    expect(sampler.asked).toEqual(["send default", "smtp", "smtp"]);
    const firstJob = await soniq.jobs.get(first.id);
    const secondJob = await soniq.jobs.get(second.id);
    expect(secondJob?.traceId).toBe(upstream.traceId);
    expect(firstJob?.traceContext?.traceparent).toMatch(/-00$/);
    expect(seen.sort((a, b) => a.traceId.localeCompare(b.traceId))).toEqual(
      [firstJob?.traceId, secondJob?.traceId]
        .sort()
        .map((traceId) => ({ traceId, flags: TraceFlags.NONE, recording: false })),
    );
    const { resourceMetrics } = await reader.collect();
    const processed = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === "soniq.jobs.processed");
    expect(processed?.dataPoints.map((p) => [p.attributes["soniq.job.outcome"], p.value])).toEqual([
      ["done", 2],
    ]);
  });

  it("otel/off: without the plugin nothing is stored on the job and no span is made", async () => {
    const { soniq, exporter, tracer } = await setup(makeBackend, null);
    soniq.job("plain.job", async () => null);
    const { id } = await inSpan(tracer, "request", () => soniq.jobs.enqueue("plain.job", {}));
    await drain(soniq, async () => (await soniq.jobs.get(id))?.status === "done");
    const job = await soniq.jobs.get(id);
    expect(job?.traceId).toBeNull();
    expect(job?.traceContext).toBeNull();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(["request"]);
  });
});

describe("opentelemetry options", () => {
  it("otel/options-checked: unknown keys and a bad parent are one SONIQ_INVALID_OPTIONS", () => {
    expect(() => openTelemetry({ parent: "sibling" as never, tracer: 1 } as never)).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_OPTIONS" }),
    );
    expect(() => openTelemetry({ redact: ["password"] as never })).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_OPTIONS" }),
    );
  });

  it("otel/redact-send: with redact, a failed write's send span keeps the error's name, not its text or stack", async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const soniq = new Soniq({ backend: memoryBackend(), redact: ["password"] });
    const plugin = openTelemetry({ tracerProvider, redact: soniq.options.redact });
    const event = {
      origin: "enqueue" as const,
      jobs: [{ id: "j1", jobName: "auth.login", queue: "default" }],
      links: [],
    };
    await plugin.producer?.(event, () => Promise.reject(new TypeError("duplicate value hunter2-secret")));
    const send = only(exporter.getFinishedSpans(), "send default");
    const shown = JSON.stringify([send.attributes, send.events.map((e) => e.attributes), send.status]);
    expect(shown).not.toContain("hunter2-secret");
    expect(shown).not.toContain("exception.stacktrace");
    expect(send.status).toEqual({ code: SpanStatusCode.ERROR, message: "TypeError" });
    expect(send.events.map((e) => e.attributes)).toEqual([{ "exception.type": "TypeError" }]);
  });
});
