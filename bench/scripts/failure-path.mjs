// Micro-profile of a failing job's error path (bench/README.md, "A failing job's error, formatted once").
// Two figures, CPU time per failure (process.cpuUsage, so other load on the machine counts less than in a
// wall-clock rate):
//   format: core's own formatting of a thrown error into the stored `last_error` (formatError, then the
//           settlement's text), for errors thrown as the worker sees them: from an async handler a microtask
//           deep, with a short message, a 100 KB message, and a non-Error value.
//   worker: 50,000 failing jobs (maxAttempts 1) on the memory backend at concurrency 10, one process: the
//           whole failure path of the worker runtime, per failure.
//
//   node bench/scripts/failure-path.mjs [format|worker|both] [rounds]
//
// Loads the built packages (pnpm build first); compare two builds by running it from each, alternately.
// SONIQ_CORE_DIST: another build's dist folder for the format part (e.g. a copy of the previous build).
const coreDist = process.env.SONIQ_CORE_DIST ?? new URL("../../packages/core/dist", import.meta.url).pathname;
const { deadLetterSettlement } = await import(`${coreDist}/worker/settlements.js`);
const { formatError } = await import(`${coreDist}/worker/runner.js`);

const what = process.argv[2] ?? "both";
const rounds = Number(process.argv[3] ?? 3);

function cpuUs() {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function inUserCode(message) {
  await undefined;
  throw new Error(message);
}

const job = { id: "j", attempts: 1, maxAttempts: 1 };
// One message shared by every error of the case, so what is timed is the formatting, not the test's own
// 100 KB allocations (and their garbage collection).
const HUGE = "x".repeat(100_000);
const cases = {
  "short message": () => inUserCode("boom"),
  "100 KB message": () => inUserCode(HUGE),
  "non-Error value": async () => {
    await undefined;
    throw { code: 42, detail: "a plain object" };
  },
};

async function formatRound(name, make, n) {
  // Errors are made first (their capture is the handler's cost, not core's); formatting is timed alone.
  const errors = [];
  for (let i = 0; i < n; i++) errors.push(await make().catch((e) => e));
  const start = cpuUs();
  let bytes = 0;
  for (const err of errors)
    bytes += deadLetterSettlement(job, "max_retries_exceeded", formatError(err)).error.length;
  return { name, usPerFailure: (cpuUs() - start) / n, storedChars: bytes / n };
}

async function workerRound(n) {
  const [{ Soniq }, { memoryBackend }] = await Promise.all([
    import("../../packages/core/dist/index.js"),
    import("../../packages/backend-memory/dist/index.js"),
  ]);
  const soniq = new Soniq({ backend: memoryBackend() });
  let seen = 0;
  let done;
  const all = new Promise((r) => (done = r));
  const fail = soniq.job(
    "bench.fail",
    async () => {
      if (++seen === n) setImmediate(done);
      throw new Error("bench failure");
    },
    { maxAttempts: 1 },
  );
  for (let i = 0; i < n; i += 1000) {
    await soniq.jobs.enqueueMany(
      Array.from({ length: Math.min(1000, n - i) }, () => ({ job: fail, args: {} })),
    );
  }
  const worker = soniq.worker({ concurrency: 10 });
  const start = cpuUs();
  const t0 = performance.now();
  await worker.start();
  await all;
  const us = cpuUs() - start;
  const ms = performance.now() - t0;
  await worker.stop();
  await soniq.close();
  return { usPerFailure: us / n, perSecond: Math.round(n / (ms / 1000)) };
}

for (let r = 1; r <= rounds; r++) {
  if (what !== "worker") {
    for (const [name, make] of Object.entries(cases)) {
      const res = await formatRound(name, make, name === "100 KB message" ? 2_000 : 20_000);
      console.log(JSON.stringify({ round: r, part: "format", ...res }));
    }
  }
  if (what !== "format")
    console.log(JSON.stringify({ round: r, part: "worker", ...(await workerRound(50_000)) }));
}
