/**
 * Optional tracing for the example, from the environment: `SONIQ_EXAMPLE_TRACING=console` prints every span
 * (the HTTP request, each job's `send` and every `process` run, one trace per request) with OpenTelemetry's
 * console exporter. Unset: no tracing, nothing stored on the jobs.
 *
 * The HTTP span is made here by hand (a real app would use @opentelemetry/instrumentation-http); the job
 * spans come from `@soniq/opentelemetry`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { Plugin } from "@soniq/core";
import { openTelemetry } from "@soniq/opentelemetry";

export interface Tracing {
  /** Install on every Soniq instance (the server's and a separate worker's). */
  readonly plugin: Plugin;
  readonly tracer: Tracer;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

/** Tracing that hands every finished span to `exporter`. */
export function createTracing(exporter: SpanExporter): Tracing {
  // Idempotent across instances: the first manager registered stays.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return {
    plugin: openTelemetry({ tracerProvider }),
    tracer: tracerProvider.getTracer("soniq-example"),
    shutdown: () => tracerProvider.shutdown(),
  };
}

/** `SONIQ_EXAMPLE_TRACING=console`, or null when unset. */
export function tracingFromEnv(env: NodeJS.ProcessEnv): Tracing | null {
  const value = env.SONIQ_EXAMPLE_TRACING ?? "";
  if (value === "") return null;
  if (value !== "console") throw new Error(`SONIQ_EXAMPLE_TRACING must be console or unset (got "${value}")`);
  return createTracing(new ConsoleSpanExporter());
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Runs each request inside a SERVER span `<METHOD> <path>`, so what it enqueues joins the request's trace. */
export function tracedListener(tracer: Tracer, listener: Listener): Listener {
  return (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const span = tracer.startSpan(
      `${req.method} ${path}`,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method ?? "", "url.path": path } },
      ROOT_CONTEXT,
    );
    res.once("close", () => {
      span.setAttribute("http.response.status_code", res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => listener(req, res));
  };
}
