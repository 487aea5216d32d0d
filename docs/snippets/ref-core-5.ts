import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
const job = soniq.job(
  "imports.row",
  async () => {
    throw new Error("upstream down");
  },
  { maxAttempts: 1 },
);
const { id } = await job.enqueue({ row: 1 });
await soniq.worker().runOnce();

const dead = await soniq.deadLetters.get(id); // { deadLetterReason: "max_retries_exceeded", lastError, ... }
const rows = await soniq.deadLetters.list({ jobName: "imports.row", limit: 50 }); // newest first
const newId = await soniq.deadLetters.replay(id); // a fresh queued job (attempts 0); the row stays, resurrectionCount 1
const jsonLines = await soniq.deadLetters.export({ reason: "max_retries_exceeded" }); // JSON lines, through `redact`
await soniq.deadLetters.export({}, process.stdout); // or write them to a stream; returns the row count
await soniq.deadLetters.purge(id); // true, then false
await soniq.close();
