/**
 * Throughput of the memory backend, for the README and the closing note (not a test):
 *   pnpm exec tsx --conditions=source packages/backend-memory/bench-throughput.ts [jobs] [batch]
 * Enqueues `jobs` in batches of 1000, then drains them with claim(limit = batch) + one settle per batch.
 * Reports rates by wall time and by this process's CPU time (the latter holds up on a busy machine).
 */
import { randomUUID } from "node:crypto";
import type { NewJob } from "@soniq/core/backend";
import { memoryBackend } from "./src/index.js";

const total = Number(process.argv[2] ?? 100_000);
const batch = Number(process.argv[3] ?? 100);

function newJob(i: number, queue: string): NewJob {
  return {
    id: randomUUID(),
    jobName: "bench.noop",
    args: { i },
    argsHash: null,
    queue,
    priority: i % 10,
    maxAttempts: 3,
    scheduledAt: null,
    dedupKey: null,
    unique: false,
    producerId: null,
    group: null,
    flowId: null,
    stepRef: null,
    argsVersion: null,
    traceId: null,
    traceContext: null,
  };
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

async function run(label: string, queues: string[], claimQueues: string[] | null): Promise<void> {
  const backend = memoryBackend();
  let t0 = performance.now();
  let c0 = process.cpuUsage();
  for (let i = 0; i < total; i += 1000) {
    const jobs: NewJob[] = [];
    for (let j = i; j < Math.min(i + 1000, total); j++)
      jobs.push(newJob(j, queues[j % queues.length] as string));
    await backend.jobs.enqueueMany(jobs, {});
  }
  const enqueueMs = performance.now() - t0;
  const enqueueCpuMs = cpuMs(c0);
  t0 = performance.now();
  c0 = process.cpuUsage();
  let done = 0;
  for (;;) {
    const claimed = (await backend.runs.claim({ queues: claimQueues, limit: batch, workerId: null })).jobs;
    if (claimed.length === 0) break;
    const applied = await backend.runs.settle(
      claimed.map((j) => ({ kind: "done", id: j.id, attempt: j.attempts, result: null, resultTtlMs: 0 })),
    );
    done += applied.filter(Boolean).length;
  }
  const drainMs = performance.now() - t0;
  const drainCpuMs = cpuMs(c0);
  if (done !== total) throw new Error(`drained ${done} of ${total}`);
  const rate = (ms: number) => Math.round(total / (ms / 1000)).toLocaleString("en-US");
  console.log(
    `${label}:\n  enqueueMany ${rate(enqueueMs)} jobs/s wall, ${rate(enqueueCpuMs)} jobs/s CPU` +
      `\n  claim+settle (batch ${batch}) ${rate(drainMs)} jobs/s wall, ${rate(drainCpuMs)} jobs/s CPU`,
  );
  await backend.close();
}

await run(`${total} jobs, 1 queue, 10 priorities`, ["default"], ["default"]);
await run(
  `${total} jobs, 10 queues, claim from all (null)`,
  Array.from({ length: 10 }, (_, i) => `q${i}`),
  null,
);
