/**
 * A script for runtime-lifecycle.test.ts: awaits runOnce() on a job that hangs until its timeout. With
 * nothing else keeping the process alive, the script must still get its answer and exit 0.
 */
import { memoryBackend } from "../../backend-memory/src/index.js";
import { Soniq } from "../src/index.js";

const soniq = new Soniq({ backend: memoryBackend() });
const slow = soniq.job("script.slow", () => new Promise(() => {}), { timeoutMs: 100, maxAttempts: 1 });
const quick = soniq.job("script.quick", async () => "ok");
await slow.enqueue({});
await quick.enqueue({});
const ran = await soniq.worker().runOnce();
const stats = await soniq.jobs.stats();
await soniq.close();
process.stdout.write(`${JSON.stringify({ ran, done: stats.done, deadLetter: stats.dead_letter })}\n`);
