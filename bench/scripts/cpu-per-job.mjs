// CPU and WAL per job of one Soniq-on-Postgres drain, a diagnostic beside `pnpm bench`, whose W1 and W4 drains
// report the same figures for every system of the run (bench/README.md, "CPU per job"). Wall-clock rates on
// this shared 2-core box drift by 2x between runs; CPU seconds per job (this process, and every Postgres
// backend serving the worker's pool, from /proc) and WAL bytes per job drift far less, so two builds can be
// compared by running this script from each, alternately.
//
//   node bench/scripts/cpu-per-job.mjs [ok|fail|retry] [jobs]
//
// ok: no-op jobs; fail: every run throws, maxAttempts 1 (W4); retry: every run throws, maxAttempts 3 with no
// delay (two retries, then the dead letter). The jobs are enqueued by one Soniq instance, which is closed;
// a second instance runs the worker, so every backend connection it opens serves the drain alone.
// Prints one JSON line. Needs PostgreSQL at $DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
import { readFileSync } from "node:fs";
import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import pg from "pg";

const kind = process.argv[2] ?? "ok";
const jobs = Number(process.argv[3] ?? 20_000);
if (!["ok", "fail", "retry"].includes(kind) || !(jobs > 0)) {
  console.error("usage: node bench/scripts/cpu-per-job.mjs [ok|fail|retry] [jobs]");
  process.exit(2);
}
const runsPerJob = kind === "retry" ? 3 : 1;
const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const admin = new pg.Client({ connectionString: adminUrl });
admin.on("error", () => {});
await admin.connect();
const db = `bench_cpu_${process.pid}`;
await admin.query(`CREATE DATABASE ${db}`);
const url = new URL(adminUrl);
url.pathname = `/${db}`;

/** Clock ticks (user + system) of these processes since they started, in ms (USER_HZ is 100 on Linux). */
function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks * 10;
}

function define(soniq, onRun) {
  const options =
    kind === "retry" ? { maxAttempts: 3, retry: { backoff: "fixed", delayMs: 0 } } : { maxAttempts: 1 };
  return soniq.job(
    "bench.cpu",
    async () => {
      onRun();
      if (kind !== "ok") throw new Error("boom");
    },
    options,
  );
}

try {
  const producer = new Soniq({ backend: postgresBackend({ connectionString: url.href }) });
  await producer.setup();
  const job = define(producer, () => {});
  for (let i = 0; i < jobs; i += 1000) {
    const n = Math.min(1000, jobs - i);
    await producer.enqueueMany(Array.from({ length: n }, (_, k) => ({ job, args: { i: i + k } })));
  }
  await producer.close();

  const soniq = new Soniq({ backend: postgresBackend({ connectionString: url.href }) });
  let runs = 0;
  let allRan;
  const ran = new Promise((resolve) => (allRan = resolve));
  define(soniq, () => {
    if (++runs === jobs * runsPerJob) allRan();
  });
  const [{ lsn: walStart }] = (await admin.query("SELECT pg_current_wal_lsn()::text AS lsn")).rows;
  const cpuStart = process.cpuUsage();
  const t0 = performance.now();
  const worker = soniq.worker({ concurrency: 10 });
  await worker.start();
  await ran;
  const check = new pg.Client({ connectionString: url.href });
  await check.connect();
  const pending = "SELECT EXISTS (SELECT 1 FROM soniq_jobs WHERE status IN ('queued', 'processing')) AS p";
  while ((await check.query(pending)).rows[0].p) await new Promise((resolve) => setTimeout(resolve, 2));
  const ms = performance.now() - t0;
  const node = process.cpuUsage(cpuStart);
  await check.end();
  const others = (
    await admin.query("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [db])
  ).rows.map((r) => r.pid);
  const pgMs = cpuMs(others);
  const [{ wal }] = (
    await admin.query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS wal", [walStart])
  ).rows;
  await worker.stop();
  await soniq.close();
  console.log(
    JSON.stringify({
      kind,
      jobs,
      runs,
      jobsPerS: Math.round((jobs / ms) * 1000),
      workerCpuUsPerJob: +((node.user + node.system) / jobs).toFixed(1),
      postgresCpuUsPerJob: +((pgMs * 1000) / jobs).toFixed(1),
      walBytesPerJob: Math.round(wal / jobs),
    }),
  );
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
}
