import { memoryBackend } from "@soniq/backend-memory";
import { PermanentError, Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
const resize = soniq.job("images.resize", async (args: { files: string[] }, ctx) => {
  for (const [i, file] of args.files.entries()) {
    if (file.endsWith(".exe")) throw new PermanentError(`not an image: ${file}`);
    ctx.progress({ done: i + 1, total: args.files.length }); // coalesced: written with the heartbeat
  }
  return { resized: args.files.length };
});
await soniq.setup();
const worker = soniq.worker();
await worker.start();

const handle = await resize.enqueue({ files: ["a.png", "b.png"] });
const outcome = await handle.result({ timeoutMs: 10_000 }); // typed: result is { resized: number }
console.log(outcome.status === "done" && outcome.result.resized);
// -> 2
const bad = await resize.enqueue({ files: ["c.exe"] });
console.log(JSON.stringify(await soniq.jobs.waitFor(bad.id, { timeoutMs: 10_000 })).split("\\n")[0]);
// -> {"status":"dead_letter","reason":"permanent_failure","lastError":"PermanentError: not an image: c.exe
await worker.stop(); // writes the last progress values
console.log((await soniq.jobs.get(handle.id))?.progress);
// -> { done: 2, total: 2 }
await soniq.close();
