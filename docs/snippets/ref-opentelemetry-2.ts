import type { MeterProvider } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { Soniq } from "@soniq/core";
import { openTelemetry } from "@soniq/opentelemetry";

declare const soniq: Soniq;
declare const exporter: SpanExporter;
declare const meterProvider: MeterProvider;

// #region snippet
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const tracerProvider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter })] });
soniq.use(openTelemetry({ tracerProvider, meterProvider }));
// #endregion snippet
