/**
 * Throughput of the memory backend through the Soniq worker (default: 20,000 no-op jobs, concurrency 10,
 * 5 rounds), next to a bare claim/settle loop on the same backend (what the backend alone allows).
 * A measurement script, not a test:
 *   node --conditions=source --import tsx packages/core/test/runtime-throughput.ts [jobs] [concurrency] [rounds]
 * (BATCH=n sets the worker's batchSize.) Prints wall-clock and CPU-time rates, medians of the rounds.
 */
import { memoryBackend } from "../../backend-memory/src/index.js";
import { Soniq } from "../src/index.js";

const N = Number(process.argv[2] ?? 20000);
const C = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 5);

async function viaWorker(): Promise<number> {
  const soniq = new Soniq({ backend: memoryBackend() });
  await soniq.setup();
  let done = 0;
  let resolve!: () => void;
  const finished = new Promise<void>((r) => {
    resolve = r;
  });
  const noop = soniq.job("bench.noop", async () => {
    if (++done === N) resolve();
  });
  await soniq.jobs.enqueueMany(Array.from({ length: N }, (_, i) => ({ job: noop, args: { i } })));
  const worker = soniq.worker({ concurrency: C, batchSize: Number(process.env.BATCH ?? C) });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await worker.start();
  await finished;
  await worker.stop(); // includes the last completion writes
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  cpuRates.push(N / ((cpu.user + cpu.system) / 1e6));
  const stats = await soniq.jobs.stats();
  if (stats.done !== N) throw new Error(`invalid run: ${JSON.stringify(stats)}`);
  await soniq.close();
  return N / (ms / 1000);
}

async function bareLoop(): Promise<number> {
  const backend = memoryBackend();
  await backend.migrations.apply();
  const soniq = new Soniq({ backend, allowUnknownJobNames: true });
  await soniq.jobs.enqueueMany(Array.from({ length: N }, (_, i) => ({ job: "bench.noop", args: { i } })));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (;;) {
    const jobs = (await backend.runs.claim({ queues: null, limit: 2 * C, workerId: null })).jobs;
    if (jobs.length === 0) break;
    await backend.runs.settle(
      jobs.map((j) => ({ kind: "done", id: j.id, attempt: j.attempts, result: null, resultTtlMs: 300_000 })),
    );
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  bareCpuRates.push(N / ((cpu.user + cpu.system) / 1e6));
  await soniq.close();
  return N / (ms / 1000);
}

const cpuRates: number[] = [];
const bareCpuRates: number[] = [];
const worker: number[] = [];
const bare: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  worker.push(await viaWorker());
  bare.push(await bareLoop());
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  `worker (concurrency ${C}): ${worker.map(Math.round).join(", ")} jobs/s; median ${Math.round(median(worker))}`,
);
console.log(
  `bare claim/settle loop: ${bare.map(Math.round).join(", ")} jobs/s; median ${Math.round(median(bare))}`,
);
console.log(`worker / bare: ${(median(worker) / median(bare)).toFixed(2)}`);
console.log(
  `CPU-time rate: worker ${Math.round(median(cpuRates))} jobs per CPU-second, bare ${Math.round(median(bareCpuRates))}`,
);
