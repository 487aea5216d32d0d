import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
// Wrapping middleware: the first registered runs outermost. It may transform the result,
// short-circuit (not call next), or throw (an ordinary failed attempt). It runs inside the timeout.
soniq.use(async (ctx, next) => {
  const started = Date.now();
  try {
    return await next();
  } finally {
    ctx.logger.info({ ms: Date.now() - started }, "job finished");
  }
});
// Hooks observe; a hook that throws is logged and ignored.
soniq.use({
  name: "audit",
  beforeJob: (ctx) => console.log("start", ctx.jobName, ctx.attempt),
  afterJob: (ctx, result) => console.log("done", ctx.jobId, result),
  onError: (ctx, error) => console.log("failed", ctx.jobId, error),
});
await soniq.close();
