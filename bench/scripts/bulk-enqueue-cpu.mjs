// CPU per bulk-enqueued job on Postgres, a diagnostic beside `pnpm bench` (whose W2 bulk is a wall-clock rate that
// moves by a third between runs on this machine): one Soniq instance enqueues N plain jobs with `enqueueMany` in
// batches of 1,000, and the script reports this process's CPU (the producer: core's checks, the backend's encoding)
// and the CPU of the database's backends serving it (/proc/<pid>/schedstat), each per job, with the rate.
//
//   node bench/scripts/bulk-enqueue-cpu.mjs [jobs]
//
// A first batch warms the pool and the statement before the clock starts. Loads the built packages (pnpm build
// first); compare two builds by running it from each, alternately. Prints one JSON line. Needs PostgreSQL at
// $DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), allowed to create a database.
import { readFileSync } from "node:fs";
import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import pg from "pg";

const jobs = Number(process.argv[2] ?? 50_000);
if (!(jobs > 0)) {
  console.error("usage: node bench/scripts/bulk-enqueue-cpu.mjs [jobs]");
  process.exit(2);
}
const BATCH = 1_000;
const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const admin = new pg.Client({ connectionString: adminUrl });
admin.on("error", () => {});
await admin.connect();
const db = `bench_bulk_${process.pid}`;
await admin.query(`CREATE DATABASE ${db}`);
const url = new URL(adminUrl);
url.pathname = `/${db}`;

/** Microseconds on CPU of these processes so far (0 for one that is gone). */
function cpuUs(pids) {
  let ns = 0;
  for (const pid of pids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  return ns / 1_000;
}

const batch = (job, from, n) => Array.from({ length: n }, (_, k) => ({ job, args: { i: from + k } }));

try {
  const soniq = new Soniq({ backend: postgresBackend({ connectionString: url.href }) });
  await soniq.setup();
  const job = soniq.job("bench.noop", async () => {});
  await soniq.jobs.enqueueMany(batch(job, -BATCH, BATCH));
  const backends = (await admin.query("SELECT pid FROM pg_stat_activity WHERE datname = $1", [db])).rows;
  const pids = backends.map((r) => r.pid);
  const dbStart = cpuUs(pids);
  const cpuStart = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < jobs; i += BATCH)
    await soniq.jobs.enqueueMany(batch(job, i, Math.min(BATCH, jobs - i)));
  const ms = performance.now() - t0;
  const producer = process.cpuUsage(cpuStart);
  const dbUs = cpuUs(pids) - dbStart;
  await soniq.close();
  console.log(
    JSON.stringify({
      jobs,
      jobsPerS: Math.round((jobs / ms) * 1000),
      producerCpuUsPerJob: +((producer.user + producer.system) / jobs).toFixed(2),
      postgresCpuUsPerJob: +(dbUs / jobs).toFixed(2),
    }),
  );
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
}
