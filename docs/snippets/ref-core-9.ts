import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
soniq.job("media.transcode", async (_args, ctx) => {
  // long work that checks ctx.signal.aborted between steps
  return ctx.signal.aborted ? "partial" : "done";
});
const worker = soniq.worker({ shutdownTimeoutMs: 30_000 });
await worker.start();
// In an application, wire your process signals to it, e.g.:
//   process.once("SIGTERM", () => void soniq.close());
await soniq.close();
