/**
 * `openTelemetry(options)`: a Soniq plugin that traces every job from its enqueue to each of its runs.
 *
 * - Producer side (core's `producer` hook): one PRODUCER span `send <queue>` per enqueue, `enqueueMany`
 *   batch, replay or schedule fire, child of the active context (a schedule's fire is a root span; a replay
 *   links to the dead letter's trace). The span's context is what core stores on the job.
 * - Consumer side (middleware + `onError` + `onOutcome`): one CONSUMER span `process <queue>` per run,
 *   a child of the stored context (`parent: "child"`, the default) or a new root linking to it
 *   (`parent: "link"`); the handler runs inside it, so its own spans nest under it. The outcome is set when
 *   core decides it, so a timeout, a cancellation or a shutdown ends the span too.
 * - Metrics through the meter: processed runs by outcome, run duration, queue lag.
 * - Errors: with the app's `redact` given (`redact: soniq.options.redact`) and active, an error text goes on a
 *   span only through it (scrubbed against the run's job row) and never a stack; a failed write's text, whose
 *   row is not at hand, is withheld (its error name stays). Without it, the error as thrown, stack included.
 */
import {
  type Attributes,
  type Context,
  context,
  type Exception,
  isSpanContextValid,
  type MeterProvider,
  metrics,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import {
  type Job,
  type JobContext,
  type Middleware,
  type Plugin,
  REDACTED,
  type Soniq,
  SoniqError,
} from "@soniq/core";
import { type RunOutcome, type SendEvent, SONIQ_VERSION, type TraceContext } from "@soniq/core/plugin";
import { fromCarrier, toCarrier } from "./carrier.js";

export interface OpenTelemetryOptions {
  /** Where spans go. Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
  /**
   * How a run relates to its enqueue: `"child"` (default) continues the producer's trace; `"link"` starts a
   * new trace per run with a link to it (for long-lived or fan-out jobs whose runs would swamp the request's).
   */
  parent?: "child" | "link";
  /**
   * The app's `redact`, as resolved: `soniq.options.redact`. While it is active, error texts on spans go through
   * it and stacks are left out. Default: none (errors are recorded as thrown, stacks included).
   */
  redact?: Redactor;
}

/** The resolved `redact` option of a Soniq instance (`soniq.options.redact`). */
type Redactor = Soniq["options"]["redact"];

const KEYS = ["tracerProvider", "meterProvider", "parent", "redact"];
const NAME = "@soniq/opentelemetry";

function resolve(options: OpenTelemetryOptions): Required<Omit<OpenTelemetryOptions, "redact">> & {
  redact: Redactor | null;
} {
  const problems: string[] = [];
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    problems.push("options must be an object { tracerProvider, meterProvider, parent, redact }");
  } else {
    for (const key of Object.keys(options)) {
      if (!KEYS.includes(key)) problems.push(`unknown option "${key}" (it takes ${KEYS.join(", ")})`);
    }
    const { tracerProvider, meterProvider, parent, redact } = options;
    if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== "function") {
      problems.push("tracerProvider must be an OpenTelemetry TracerProvider (with getTracer)");
    }
    if (meterProvider !== undefined && typeof meterProvider?.getMeter !== "function") {
      problems.push("meterProvider must be an OpenTelemetry MeterProvider (with getMeter)");
    }
    if (parent !== undefined && parent !== "child" && parent !== "link") {
      problems.push(`parent must be "child" or "link", got ${JSON.stringify(parent)}`);
    }
    if (
      redact !== undefined &&
      (typeof redact?.error !== "function" || typeof (redact as { active?: unknown }).active !== "boolean")
    ) {
      problems.push("redact must be the app's resolved redact: soniq.options.redact");
    }
  }
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `openTelemetry(options): ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return {
    tracerProvider: options.tracerProvider ?? trace.getTracerProvider(),
    meterProvider: options.meterProvider ?? metrics.getMeterProvider(),
    parent: options.parent ?? "child",
    redact: options.redact?.active ? options.redact : null,
  };
}

interface Recorded {
  /** For `span.recordException`. */
  readonly exception: Exception;
  /** For the span's error status. */
  readonly message: string;
}

/**
 * What a span records of a thrown error: without `redact`, the error as thrown (stack included); with it, the
 * error's name and its message through `redact` scrubbed against the job row, never a stack. With no row at hand
 * (`job` undefined: a failed write), the message is withheld.
 */
function recorded(err: unknown, redact: Redactor | null, jobName: string, job?: Job): Recorded {
  if (!redact) {
    return err instanceof Error
      ? { exception: err, message: err.message }
      : { exception: String(err), message: String(err) };
  }
  const text = err instanceof Error ? err.message : String(err);
  const message = job ? redact.error(text, jobName, job) : null;
  if (!(err instanceof Error)) return { exception: message ?? REDACTED, message: message ?? REDACTED };
  return message === null
    ? { exception: { name: err.name }, message: err.name }
    : { exception: { name: err.name, message }, message };
}

/** The attributes every span of a job carries (OpenTelemetry messaging conventions, plus soniq.*). */
function messaging(operation: "send" | "process", queue: string): Attributes {
  return {
    "messaging.system": "soniq",
    "messaging.operation.type": operation,
    "messaging.destination.name": queue,
  };
}

function sendAttributes(event: SendEvent, queue: string): Attributes {
  const attributes = messaging("send", queue);
  attributes["soniq.send.origin"] = event.origin;
  const [first] = event.jobs;
  if (event.jobs.length === 1 && first) attributes["messaging.message.id"] = first.id;
  else attributes["messaging.batch.message_count"] = event.jobs.length;
  if (first && event.jobs.every((j) => j.jobName === first.jobName))
    attributes["soniq.job.name"] = first.jobName;
  return attributes;
}

/** What every run of one job name on one queue shares (so it is built once, not per run). */
interface RunShape {
  readonly spanName: string;
  readonly lagAttributes: Attributes;
  readonly outcomeAttributes: Map<RunOutcome["outcome"], Attributes>;
  readonly queue: string;
  readonly jobName: string;
}

/** Bound on the per-(queue, job name) cache; past it the cache starts over (names are few in practice). */
const MAX_SHAPES = 1024;

interface Run {
  /** The run's span; when the enqueue was sampled out, a non-recording span carrying the stored context. */
  readonly span: Span;
  readonly shape: RunShape;
}

/** A stored carrier as parsed: the jobs of one `enqueueMany` share one, so the last is kept. */
interface Parsed {
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  readonly stored: SpanContext | null;
  /** `stored` as the parent of a run (`parent: "child"`), or the root context. */
  readonly parentContext: Context;
}

/** Whether a span context's trace was sampled out upstream (the W3C sampled flag unset). */
const sampledOut = (spanContext: SpanContext): boolean => (spanContext.traceFlags & TraceFlags.SAMPLED) === 0;

/** A Soniq plugin: `soniq.use(openTelemetry({ tracerProvider, meterProvider, parent, redact }))`. */
export function openTelemetry(options: OpenTelemetryOptions = {}): Plugin {
  const resolved = resolve(options);
  const { tracerProvider, meterProvider, parent } = resolved;
  // Without `redact` given, the app's own, from the first instance the plugin is attached to (`soniq.use`).
  let redact = resolved.redact;
  let attached = options.redact !== undefined;
  const tracer: Tracer = tracerProvider.getTracer(NAME, SONIQ_VERSION);
  const meter = meterProvider.getMeter(NAME, SONIQ_VERSION);
  const processed = meter.createCounter("soniq.jobs.processed", {
    description: "Job runs by outcome (done, retry, snooze, dead_letter, cancelled, lost, nack).",
    unit: "{run}",
  });
  const duration = meter.createHistogram("messaging.process.duration", {
    description: "Run time of a job, from its start to its outcome.",
    unit: "s",
  });
  const lag = meter.createHistogram("soniq.queue.lag", {
    description: "How long a job waited past its due time before a worker started it.",
    unit: "s",
  });
  const runs = new WeakMap<JobContext, Run>();
  const shapes = new Map<string, RunShape>();
  let lastShape: RunShape | null = null;
  const shapeOf = (queue: string, jobName: string): RunShape => {
    // A worker's runs are mostly of one queue and job name at a time: the last shape first, no key to build.
    if (lastShape !== null && lastShape.queue === queue && lastShape.jobName === jobName) return lastShape;
    const key = `${queue}\u0000${jobName}`;
    let shape = shapes.get(key);
    if (!shape) {
      // Built once per queue and job name: the span's name, its constant attributes, the metric attributes.
      const base = { "messaging.system": "soniq", "messaging.destination.name": queue };
      shape = {
        spanName: `process ${queue}`,
        lagAttributes: base,
        outcomeAttributes: new Map(),
        queue,
        jobName,
      };
      if (shapes.size >= MAX_SHAPES) shapes.clear();
      shapes.set(key, shape);
    }
    lastShape = shape;
    return shape;
  };

  let lastParsed: Parsed | null = null;
  const parse = (carrier: TraceContext | null | undefined): Parsed => {
    const traceparent = carrier?.traceparent;
    const tracestate = carrier?.tracestate;
    if (
      lastParsed !== null &&
      lastParsed.traceparent === traceparent &&
      lastParsed.tracestate === tracestate
    ) {
      return lastParsed;
    }
    const stored = fromCarrier(carrier);
    const parentContext =
      stored && parent === "child" ? trace.setSpanContext(ROOT_CONTEXT, stored) : ROOT_CONTEXT;
    lastParsed = { traceparent, tracestate, stored, parentContext };
    return lastParsed;
  };

  const startRun = (ctx: JobContext): Run => {
    const job = ctx.job;
    const shape = shapeOf(job.queue, job.jobName);
    const { stored, parentContext } = parse(job.traceContext);
    let run: Run;
    if (stored && parent === "child" && sampledOut(stored)) {
      // Decided at the enqueue: the trace was sampled out there, so the run starts no span and builds no
      // attributes (a parent-based sampler, the SDK's default, would drop it anyway). The handler still runs
      // in the stored context, so its own spans and outgoing calls carry the trace, unsampled.
      run = { span: trace.wrapSpanContext(stored), shape };
    } else {
      // One literal of a fixed shape (faster to build than a spread of the cached part); the SDK copies it.
      const attributes: Attributes = {
        "messaging.system": "soniq",
        "messaging.operation.type": "process",
        "messaging.destination.name": shape.queue,
        "messaging.message.id": job.id,
        "soniq.job.name": shape.jobName,
        "soniq.job.attempt": ctx.attempt,
      };
      const span = tracer.startSpan(
        shape.spanName,
        stored && parent === "link"
          ? { kind: SpanKind.CONSUMER, attributes, links: [{ context: stored }] }
          : { kind: SpanKind.CONSUMER, attributes },
        parentContext,
      );
      run = { span, shape };
    }
    runs.set(ctx, run);
    lag.record(Math.max(0, Date.now() - job.scheduledAt.getTime()) / 1000, shape.lagAttributes);
    return run;
  };

  const middleware: Middleware = (ctx, next) => {
    const run = runs.get(ctx) ?? startRun(ctx);
    return context.with(trace.setSpan(context.active(), run.span), next);
  };

  return {
    name: NAME,
    attach(soniq) {
      if (attached) return;
      attached = true;
      redact = soniq.options.redact.active ? soniq.options.redact : null;
    },
    middleware,
    producer(event, send) {
      const [first] = event.jobs;
      if (!first) return send(null);
      // A schedule's fire belongs to no request: a root span (the job's runs continue it).
      const parentContext = event.origin === "schedule" ? ROOT_CONTEXT : context.active();
      const active = trace.getSpanContext(parentContext);
      if (active && isSpanContextValid(active) && sampledOut(active)) {
        // Sampled out upstream: no span, no attributes; the jobs carry the unsampled trace so their runs skip too.
        return send(toCarrier(active));
      }
      const links = event.links.flatMap((carrier: TraceContext) => {
        const linked = fromCarrier(carrier);
        return linked ? [{ context: linked, attributes: { "soniq.link": "dead_letter" } }] : [];
      });
      const span = tracer.startSpan(
        `send ${first.queue}`,
        { kind: SpanKind.PRODUCER, attributes: sendAttributes(event, first.queue), links },
        parentContext,
      );
      return send(toCarrier(span.spanContext())).then(
        () => span.end(),
        (err: unknown) => {
          // With redact, the write's error is withheld but for its name: the jobs' args are not at hand to scrub.
          const { exception, message } = recorded(err, redact, first.jobName);
          span.recordException(exception);
          span.setStatus({ code: SpanStatusCode.ERROR, message });
          span.end();
        },
      );
    },
    step(ctx, info, run) {
      // A child of the run's span: one `step <name>` span per step that runs (none for a stored one), none
      // either when the run's span is not recording (its trace sampled out).
      const parentSpan = runs.get(ctx)?.span;
      if (parentSpan && !parentSpan.isRecording()) return run();
      const parentContext = parentSpan ? trace.setSpan(context.active(), parentSpan) : context.active();
      const span = tracer.startSpan(
        `step ${info.name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            "soniq.step.name": info.name,
            "soniq.step.transaction": info.transaction,
            "messaging.message.id": ctx.jobId,
          },
        },
        parentContext,
      );
      const failed = (err: unknown) => {
        const { exception, message } = recorded(err, redact, ctx.jobName, ctx.job);
        span.recordException(exception);
        span.setStatus({ code: SpanStatusCode.ERROR, message });
        span.end();
      };
      let result: ReturnType<typeof run>;
      try {
        result = context.with(trace.setSpan(parentContext, span), run);
      } catch (err) {
        failed(err);
        throw err;
      }
      if (result instanceof Promise) {
        return result.then(
          (value) => {
            span.end();
            return value;
          },
          (err: unknown) => {
            failed(err);
            throw err;
          },
        ) as typeof result;
      }
      span.end();
      return result;
    },
    onError(ctx, err) {
      const run = runs.get(ctx);
      if (run?.span.isRecording())
        run.span.recordException(recorded(err, redact, ctx.jobName, ctx.job).exception);
    },
    onOutcome(ctx, outcome: RunOutcome) {
      // A run the handler never reached (no handler here, args failing the schema) still gets its span.
      const { span, shape: started } = runs.get(ctx) ?? startRun(ctx);
      runs.delete(ctx);
      if (span.isRecording()) {
        span.setAttribute("soniq.job.outcome", outcome.outcome);
        if (outcome.deadLetterReason) span.setAttribute("soniq.dead_letter.reason", outcome.deadLetterReason);
        if (outcome.outcome === "retry" || outcome.outcome === "dead_letter") {
          // The stored text's first line (`Name: message`), after redact saw the whole text (stack included).
          const text = redact ? redact.error(outcome.error, ctx.jobName, ctx.job) : outcome.error;
          span.setStatus({ code: SpanStatusCode.ERROR, message: firstLine(text) });
        }
      }
      span.end();
      const shape =
        started.queue === ctx.queue && started.jobName === ctx.jobName
          ? started
          : shapeOf(ctx.queue, ctx.jobName);
      let attributes = shape.outcomeAttributes.get(outcome.outcome);
      if (!attributes) {
        attributes = {
          "messaging.system": "soniq",
          "messaging.destination.name": ctx.queue,
          "soniq.job.name": ctx.jobName,
          "soniq.job.outcome": outcome.outcome,
        };
        shape.outcomeAttributes.set(outcome.outcome, attributes);
      }
      processed.add(1, attributes);
      duration.record(outcome.durationMs / 1000, attributes);
    },
  };
}

function firstLine(text: string | null): string {
  if (text === null) return "";
  const end = text.indexOf("\n");
  return end === -1 ? text : text.slice(0, end);
}
