import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";
import { openTelemetry } from "./src/index.js";

const mode = process.argv[2] ?? "plain";
if (mode.includes("ctx")) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = {
  export: (_s: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};
const soniq = new Soniq({ backend: memoryBackend() });
if (mode.includes("otel")) {
  soniq.use(
    openTelemetry({
      tracerProvider: new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter })] }),
      ...(mode.includes("nometer") ? {} : { meterProvider: new MeterProvider() }),
    }),
  );
}
if (mode.includes("noop")) soniq.use({ onOutcome() {} });
const job = soniq.job("bench.noop", async () => null);
await soniq.setup();
const N = 20000;
for (let i = 0; i < N; i += 1000)
  await soniq.enqueueMany(Array.from({ length: 1000 }, (_, k) => ({ job, args: { i: i + k } })));
const t0 = performance.now();
await soniq.worker({ concurrency: 10 }).runOnce();
const ms = performance.now() - t0;
console.log(mode, Math.round(N / (ms / 1000)), "jobs/s", (await soniq.getQueueStats()).done);
await soniq.close();
