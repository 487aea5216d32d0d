/**
 * Seeds a dedicated PostgreSQL database for the dashboard's timing run: 1,000,000 done jobs,
 * 100,000 dead letters and a few thousand queued and retrying jobs, spread over 14 days, by bulk
 * INSERT ... SELECT FROM generate_series (about a minute on 2 cores). Never run in CI.
 *
 *   pnpm --dir packages/dashboard seed [--database-url postgres://…/soniq_dashboard_seed] [--jobs 1000000] [--dead 100000]
 *
 * The database (default `soniq_dashboard_seed` on DATABASE_URL's server) is dropped and re-created.
 */
import { parseArgs } from "node:util";
import { postgresBackend } from "@soniq/backend-postgres";
import pg from "pg";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    jobs: { type: "string", default: "1000000" },
    dead: { type: "string", default: "100000" },
  },
});

const admin = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test");
const target = new URL(values["database-url"] ?? admin.toString());
if (!values["database-url"]) target.pathname = "/soniq_dashboard_seed";
const dbName = target.pathname.slice(1);
if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) throw new Error(`database name ${dbName} must be a plain identifier`);
const JOBS = Number(values.jobs);
const DEAD = Number(values.dead);
const CHUNK = 100_000;

const NAMES = [
  "emails.send_welcome",
  "emails.send_receipt",
  "billing.charge",
  "billing.refund",
  "reports.build",
  "images.resize",
  "search.reindex",
  "webhooks.deliver",
];
const QUEUES = ["default", "emails", "billing", "reports"];
const REASONS = ["max_retries_exceeded", "permanent_failure", "job_not_found", "invalid_arguments"];
const names = `ARRAY[${NAMES.map((n) => `'${n}'`).join(",")}]`;
const queues = `ARRAY[${QUEUES.map((n) => `'${n}'`).join(",")}]`;
const reasons = `ARRAY[${REASONS.map((n) => `'${n}'`).join(",")}]`;
const span = "interval '14 days'";
/**
 * A UUIDv7 for a job created at `t`, as core's `newJobId` makes them: the epoch milliseconds in the first 48
 * bits, version 7, then random bits. Jobs list by id, so the seeded ids must follow `created_at`.
 */
const v7At = (t: string) => `encode(set_byte(overlay(uuid_send(gen_random_uuid())
    placing substring(int8send((extract(epoch FROM ${t}) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
    6, (get_byte(uuid_send(gen_random_uuid()), 6) & 15) | 112), 'hex')::uuid`;

async function timed(label: string, run: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  await run();
  console.log(`${label}: ${((performance.now() - start) / 1000).toFixed(1)} s`);
}

const server = new pg.Client({ connectionString: admin.toString() });
await server.connect();
await server.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
await server.query(`CREATE DATABASE ${dbName}`);
await server.end();

const backend = postgresBackend({ connectionString: target.toString() });
await timed("migrations", () => backend.migrations.apply());
await backend.close();

const db = new pg.Client({ connectionString: target.toString() });
await db.connect();
await db.query("SET synchronous_commit = off");
for (let done = 0; done < JOBS; done += CHUNK) {
  const n = Math.min(CHUNK, JOBS - done);
  await timed(`done jobs ${done + n}/${JOBS}`, () =>
    db.query(`
      INSERT INTO soniq_jobs (id, job_name, args, status, attempts, max_attempts, queue, priority, scheduled_at,
                              result, producer_id, created_at, updated_at)
      SELECT ${v7At("t")}, (${names})[1 + (g % 8)], jsonb_build_object('n', g), 'done', 1, 3,
             (${queues})[1 + (g % 4)], 100, t, jsonb_build_object('ok', true), 'seed', t, t + interval '40 milliseconds'
      FROM generate_series(${done + 1}, ${done + n}) AS g,
           LATERAL (SELECT now() - ${span} * (g::float8 / ${JOBS})) AS x(t)`),
  );
}
await timed("queued and retrying jobs (3,000)", () =>
  db.query(`
    INSERT INTO soniq_jobs (id, job_name, args, status, attempts, max_attempts, queue, priority, scheduled_at,
                            last_error, producer_id, created_at, updated_at)
    SELECT ${v7At("t")}, (${names})[1 + (g % 8)], jsonb_build_object('n', g), 'queued', g % 2, 3,
           (${queues})[1 + (g % 4)], 100, now() + (g % 2) * interval '1 hour',
           CASE WHEN g % 2 = 1 THEN 'Error: upstream timeout ' || g || E'\\n    at handler (app.js:1:1)' END,
           'seed', t, now()
    FROM generate_series(1, 3000) AS g, LATERAL (SELECT now() - interval '1 second' * g) AS x(t)`),
);
for (let done = 0; done < DEAD; done += CHUNK) {
  const n = Math.min(CHUNK, DEAD - done);
  await timed(`dead letters ${done + n}/${DEAD}`, () =>
    db.query(`
      INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts, last_error,
                                          dead_letter_reason, original_created_at, moved_to_dead_letter_at, created_at)
      SELECT gen_random_uuid(), (${names})[1 + (g % 8)], jsonb_build_object('n', g), (${queues})[1 + (g % 4)], 100, 3, 3,
             'Error: card declined ' || g || E'\\n    at charge (billing.js:10:5)', (${reasons})[1 + (g % 4)],
             t - interval '1 minute', t, t
      FROM generate_series(${done + 1}, ${done + n}) AS g,
           LATERAL (SELECT now() - ${span} * (g::float8 / ${DEAD})) AS x(t)`),
  );
}
// VACUUM as autovacuum would soon after a bulk load: it sets the visibility map (index-only scans) and the
// planner statistics the dashboard's estimates read.
await timed("vacuum analyze", () => db.query("VACUUM ANALYZE"));
const { rows } = await db.query(
  "SELECT (SELECT count(*) FROM soniq_jobs) AS jobs, (SELECT count(*) FROM soniq_dead_letter_jobs) AS dead",
);
await db.end();
console.log(`seeded ${target.toString()}: ${rows[0].jobs} jobs, ${rows[0].dead} dead letters`);
