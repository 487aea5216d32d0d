import type { Soniq } from "@soniq/core";
import { openTelemetry } from "@soniq/opentelemetry";

declare const soniq: Soniq;

// #region snippet
import { ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } from "@opentelemetry/sdk-trace";

// One trace in ten is recorded, decided where it starts; the jobs enqueued in it follow that decision.
const tracerProvider = new TracerProvider({
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }),
});
soniq.use(openTelemetry({ tracerProvider }));
// #endregion snippet
