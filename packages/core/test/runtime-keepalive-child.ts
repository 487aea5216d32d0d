/**
 * A worker-only process for runtime-lifecycle.test.ts (`runtime/keeps-process-alive`): it starts a worker on
 * the memory backend, lets it run a job, unrefs its IPC channel (so only the worker can hold the process
 * open), says "idle", and stops the worker when the parent says "stop". It must then exit by itself.
 */
import { memoryBackend } from "../../backend-memory/src/index.js";
import { Soniq } from "../src/index.js";

const soniq = new Soniq({ backend: memoryBackend() });
const job = soniq.job("keepalive.noop", async () => null);
const worker = soniq.worker();
await worker.start();
const done = new Promise<void>((resolve) => worker.on("job:done", () => resolve()));
await job.enqueue({});
await done;
process.on("message", (m) => {
  if (m !== "stop") return;
  void soniq.close().then(() => process.send?.("stopped"));
});
process.channel?.unref();
process.send?.("idle");
