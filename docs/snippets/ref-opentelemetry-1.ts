import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { Soniq } from "@soniq/core";

declare const soniq: Soniq;
declare const tracerProvider: TracerProvider;
declare const meterProvider: MeterProvider;

// #region snippet
import { openTelemetry } from "@soniq/opentelemetry";

soniq.use(openTelemetry({ tracerProvider, meterProvider, parent: "child" })); // takes the app's redact itself
// #endregion snippet
