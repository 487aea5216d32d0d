import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import pg from "pg";
const kind = process.argv[2] ?? "fail";
const jobs = Number(process.argv[3] ?? 2000);
const adminUrl = "postgres://postgres@127.0.0.1:5432/test";
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
const db = `bench_tl_${process.pid}`;
await admin.query(`CREATE DATABASE ${db}`);
const url = new URL(adminUrl); url.pathname = `/${db}`;
const events = [];
let t0 = 0; let on = false;
const origQuery = pg.Client.prototype.query;
const origConnect = pg.Client.prototype.connect;
let cid = 0;
pg.Client.prototype.connect = function (...a) {
  if (!on) return origConnect.apply(this, a);
  const id = this.__id ?? (this.__id = ++cid);
  const s = performance.now() - t0;
  const done = () => events.push([s, performance.now() - t0, id, "CONNECT"]);
  if (typeof a[a.length - 1] === "function") { const cb = a.pop(); return origConnect.call(this, (...x) => { done(); cb(...x); }); }
  const p = origConnect.apply(this, a);
  if (p && p.then) p.then(() => events.push([s, performance.now() - t0, id, "CONNECT"]));
  return p;
};
pg.Client.prototype.query = function (q, ...rest) {
  if (!on) return origQuery.call(this, q, ...rest);
  const id = this.__id ?? (this.__id = ++cid);
  let text = typeof q === "string" ? q : q?.text ?? q?.name ?? "?";
  const vals = q?.values ?? rest[0];
  if (Array.isArray(vals)) { const arr = vals.find((v) => Array.isArray(v)); text = `[${arr ? arr.length : typeof vals[0] === "number" ? "lim " + vals[0] : "-"}] ` + text; }
  const s = performance.now() - t0;
  const done = () => events.push([s, performance.now() - t0, id, text.replace(/\s+/g, " ").slice(0, 70)]);
  if (typeof rest[rest.length - 1] === "function") { const cb = rest.pop(); return origQuery.call(this, q, ...rest, (...x) => { done(); cb(...x); }); }
  const r = origQuery.call(this, q, ...rest);
  if (r && r.then) r.then(done, done); else if (q && typeof q.on === "function") { q.on("end", done); q.on("error", done); }
  return r;
};
try {
  const producer = new Soniq({ backend: postgresBackend({ connectionString: url.href }) });
  await producer.setup();
  const def = (s, onRun) => s.job("bench.cpu", async () => { onRun(); if (kind !== "ok") throw new Error("boom"); }, { maxAttempts: 1 });
  const job = def(producer, () => {});
  for (let i = 0; i < jobs; i += 1000) await producer.enqueueMany(Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({ job, args: { i: i + k } })));
  await producer.close();
  const soniq = new Soniq({ backend: postgresBackend({ connectionString: url.href }) });
  let runs = 0, first = 0, allRan; const ran = new Promise((r) => (allRan = r));
  def(soniq, () => { if (runs === 0) first = performance.now() - t0; if (++runs === jobs) allRan(); });
  const worker = soniq.worker({ concurrency: 10 });
  on = true; t0 = performance.now();
  await worker.start();
  const started = performance.now() - t0;
  await ran;
  const allRanAt = performance.now() - t0;
  const check = new pg.Client({ connectionString: url.href }); on = false; await check.connect();
  while ((await check.query("SELECT EXISTS (SELECT 1 FROM soniq_jobs WHERE status IN ('queued','processing')) AS p")).rows[0].p) await new Promise((r) => setTimeout(r, 1));
  const end = performance.now() - t0;
  await check.end();
  await worker.stop(); await soniq.close();
  events.sort((a, b) => a[0] - b[0]);
  for (const e of events.slice(0, Number(process.env.N ?? 40))) console.log(`${e[0].toFixed(1).padStart(7)} ${e[1].toFixed(1).padStart(7)} c${e[2]} ${e[3]}`);
  console.log({ started: started.toFixed(1), first: first.toFixed(1), allRan: allRanAt.toFixed(1), end: end.toFixed(1), queries: events.length });
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`); await admin.end();
}
