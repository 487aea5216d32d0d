import { context, SpanKind } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";
import { openTelemetry } from "@soniq/opentelemetry";

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter(); // or ConsoleSpanExporter, or an OTLP exporter
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

const soniq = new Soniq({ backend: memoryBackend() });
soniq.use(openTelemetry({ tracerProvider })); // meterProvider, parent: "child" (default) | "link"
const sendWelcome = soniq.job("emails.send_welcome", async ({ to }: { to: string }) => ({ sent: to }));
await soniq.setup();

const { id } = await sendWelcome.enqueue({ to: "ada@example.com" }); // inside your request's span, if any
await soniq.worker().runOnce();

const job = await soniq.jobs.get(id);
for (const span of exporter.getFinishedSpans()) {
  const parent = span.parentSpanContext ? "child" : "root";
  const sameTrace = span.spanContext().traceId === job?.traceId;
  console.log(SpanKind[span.kind], span.name, parent, sameTrace, span.attributes["soniq.job.outcome"] ?? "-");
}
// -> PRODUCER send default root true -
// -> CONSUMER process default child true done
await soniq.close();
