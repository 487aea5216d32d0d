/**
 * Times every page and API route of the dashboard against the seeded database (scripts/seed.ts):
 * the dashboard runs on node:http (serveDashboard) over a Postgres backend, requests go through
 * fetch, one warm-up and then the median and worst of 5 runs per route (writes: 5 different targets).
 * Prints a Markdown table for docs/reference/dashboard.md.
 *
 *   pnpm --dir packages/dashboard timing [--database-url postgres://…/soniq_dashboard_seed]
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import { serveDashboard } from "../src/index.js";
import { encodeCursor } from "../src/paging.js";

const { values } = parseArgs({ options: { "database-url": { type: "string" } } });
const admin = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test");
const url = new URL(values["database-url"] ?? admin.toString());
if (!values["database-url"]) url.pathname = "/soniq_dashboard_seed";

const KEY = "timing-key-0123456789abcdef";
const soniq = new Soniq({
  backend: postgresBackend({ connectionString: url.toString() }),
  allowUnknownJobNames: true,
});
const server = await serveDashboard({
  soniq,
  port: 0,
  apiKeys: [{ key: KEY, label: "timing", scope: "write" }],
});
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

async function once(path: string, method = "GET", body?: unknown): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  const ms = performance.now() - start;
  if (res.status === 501) console.error(`${method} ${path} answered 501 (not available in this core)`);
  else if (res.status >= 400) throw new Error(`${method} ${path} answered ${res.status}`);
  return ms;
}

const startLoad = loadavg()
  .map((l) => l.toFixed(2))
  .join(", ");
const rows: { route: string; median: number; max: number }[] = [];
async function measure(route: string, run: (i: number) => Promise<number>, runs = 5): Promise<void> {
  await run(-1);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await run(i));
  times.sort((a, b) => a - b);
  rows.push({
    route,
    median: times[Math.floor(times.length / 2)] as number,
    max: times[times.length - 1] as number,
  });
  console.error(`${route}: ${times.map((t) => t.toFixed(0)).join(" ")} ms`);
}

const [doneJob] = await soniq.jobs.list({ status: "done", limit: 1 });
const queued = await soniq.jobs.list({ status: "queued", limit: 12 });
const dead = await soniq.deadLetters.list({ limit: 24 });
if (!doneJob || queued.length < 12 || dead.length < 24)
  throw new Error("seed the database first (pnpm seed)");
const deadId = dead[0]?.id as string;
// Cursors as the pages issue them, at the 500,000th job and the 50,000th dead letter (found once through
// core's offset paging, which is the slow part and not timed).
const [deepJob] = await soniq.jobs.list({ offset: 499_999, limit: 1 });
const [deepDead] = await soniq.deadLetters.list({ offset: 49_999, limit: 1 });
if (!deepJob || !deepDead) throw new Error("seed the database first (pnpm seed)");
const at = (d: "older" | "newer", t: Date, i: string) => encodeCursor({ d, t: t.getTime(), i });
const deepNext = at("older", deepJob.createdAt, deepJob.id);
const deepPrev = at("newer", deepJob.createdAt, deepJob.id);
const deepDeadNext = at("older", deepDead.movedToDeadLetterAt, deepDead.id);

const reads: [string, string][] = [
  ["page /", "/"],
  ["page /?range=14d", "/?range=14d"],
  ["page /jobs", "/jobs"],
  ["page /jobs?status=done", "/jobs?status=done"],
  ["page /jobs?name=billing.charge", "/jobs?name=billing.charge"],
  ["page /jobs?status=cancelled", "/jobs?status=cancelled"],
  ["page /jobs?cursor=<job 500,000, next>", `/jobs?cursor=${deepNext}`],
  ["page /jobs?cursor=<job 500,000, previous>", `/jobs?cursor=${deepPrev}`],
  ["page /jobs?q=<id>", `/jobs?q=${doneJob.id}`],
  ["page /jobs/:id", `/jobs/${doneJob.id}`],
  ["page /dead-letters", "/dead-letters"],
  ["page /dead-letters?reason=permanent_failure", "/dead-letters?reason=permanent_failure"],
  ["page /dead-letters?cursor=<row 50,000>", `/dead-letters?cursor=${deepDeadNext}`],
  ["page /dead-letters/:id", `/dead-letters/${deadId}`],
  ["page /workers", "/workers"],
  ["page /queues", "/queues"],
  ["page /schedules", "/schedules"],
  ["page /audit", "/audit"],
  ["GET /api/stats", "/api/stats"],
  ["GET /api/queues", "/api/queues"],
  ["GET /api/jobs", "/api/jobs"],
  ["GET /api/jobs?limit=1000", "/api/jobs?limit=1000"],
  ["GET /api/jobs?status=queued", "/api/jobs?status=queued"],
  ["GET /api/jobs?queue=billing&name=billing.charge", "/api/jobs?queue=billing&name=billing.charge"],
  ["GET /api/jobs?q=<id>", `/api/jobs?q=${doneJob.id}`],
  ["GET /api/jobs?q=upstream (text search, scans ≤10,000)", "/api/jobs?q=upstream"],
  ["GET /api/jobs?name=no.such_job (matches nothing)", "/api/jobs?name=no.such_job"],
  ["GET /api/jobs?cursor=<job 500,000, next>", `/api/jobs?cursor=${deepNext}`],
  ["GET /api/jobs?cursor=<job 500,000, previous>", `/api/jobs?cursor=${deepPrev}`],
  ["GET /api/jobs/:id", `/api/jobs/${doneJob.id}`],
  ["GET /api/dead-letters", "/api/dead-letters"],
  ["GET /api/dead-letters?reason&since=1d", "/api/dead-letters?reason=job_not_found&since=1d"],
  ["GET /api/dead-letters?queue=billing&until=7d", "/api/dead-letters?queue=billing&until=7d"],
  ["GET /api/dead-letters?cursor=<row 50,000>", `/api/dead-letters?cursor=${deepDeadNext}`],
  ["GET /api/dead-letters/:id", `/api/dead-letters/${deadId}`],
  ["GET /api/workers", "/api/workers"],
];
for (const [route, path] of reads) await measure(route, () => once(path));
for (const path of ["/api/schedules", "/api/audit", "/api/metrics"]) {
  await measure(`GET ${path}`, () => once(path));
}

await measure("POST /api/jobs/:id/cancel", (i) => once(`/api/jobs/${queued[i + 1]?.id}/cancel`, "POST"));
await measure("POST /api/dead-letters/:id/replay", (i) =>
  once(`/api/dead-letters/${dead[i + 1]?.id}/replay`, "POST"),
);
await measure("POST /api/dead-letters/:id/purge", (i) =>
  once(`/api/dead-letters/${dead[i + 7]?.id}/purge`, "POST"),
);
await measure("POST /api/dead-letters/replay-where (ids, 5)", (i) =>
  once("/api/dead-letters/replay-where", "POST", { ids: dead.slice(13, 18).map((d) => d.id), dryRun: i < 4 }),
);
await measure("POST …/replay-where dryRun, since=1h (~300 rows)", () =>
  once("/api/dead-letters/replay-where", "POST", { filter: { since: "1h" }, dryRun: true }),
);
await measure(
  "POST …/purge-where dryRun, all 100,000",
  () => once("/api/dead-letters/purge-where", "POST", { filter: {}, all: true, dryRun: true }),
  1,
);

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
console.log(`load average (1, 5, 15 min) at the start: ${startLoad}; at the end: ${load()}`);
console.log("| route | median ms | worst ms |\n|---|---:|---:|");
for (const r of rows) console.log(`| ${r.route} | ${r.median.toFixed(0)} | ${r.max.toFixed(0)} |`);
await server.close();
await soniq.close();
