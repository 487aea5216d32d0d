/**
 * Drain benchmark for this backend alone: bulk-enqueue N no-op jobs, then drain them with `concurrency`
 * handlers in flight, claiming in batches into a local buffer and flushing completions in batches (what
 * the worker runtime does), on a database of its own. Prints jobs/s.
 *
 *   pnpm exec tsx --conditions=source packages/backend-postgres/scripts/drain.ts [jobs] [concurrency] [claimBatch] [async]
 *
 * A fourth argument `async` runs with `asyncOutcomes: true`.
 *
 * Uses DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) to create and drop the database.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { Job } from "@soniq/core";
import type { DoneSettlement, NewJob } from "@soniq/core/backend";
import pg from "pg";
import { type PostgresBackend, postgresBackend } from "../src/index.js";

const TOTAL = Number(process.argv[2] ?? 10_000);
const CONCURRENCY = Number(process.argv[3] ?? 10);
const CLAIM_BATCH = Number(process.argv[4] ?? 100);
const ASYNC_OUTCOMES = process.argv[5] === "async";
const RESULT_TTL_MS = 300_000; // done rows are kept, as with the runtime's default result TTL
const QUEUE = "drain";
const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function job(): NewJob {
  return {
    id: randomUUID(),
    jobName: "bench.noop",
    args: {},
    argsHash: null,
    queue: QUEUE,
    priority: 100,
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

async function drain(backend: PostgresBackend): Promise<number> {
  const buffer: Job[] = [];
  const pending: DoneSettlement[] = [];
  let claiming: Promise<number> | undefined;
  let flushing: Promise<void> | undefined;
  let completed = 0;

  const claim = (): Promise<number> => {
    claiming ??= backend.runs
      .claim({ queues: [QUEUE], limit: CLAIM_BATCH, workerId: null })
      .then(({ jobs }) => {
        buffer.push(...jobs);
        return jobs.length;
      })
      .finally(() => {
        claiming = undefined;
      });
    return claiming;
  };
  const flush = async (): Promise<void> => {
    while (pending.length > 0) {
      const applied = await backend.runs.settle(pending.splice(0));
      completed += applied.filter(Boolean).length;
    }
  };
  const requestFlush = () => {
    flushing ??= flush().finally(() => {
      flushing = undefined;
    });
  };
  const slot = async (): Promise<void> => {
    for (;;) {
      const next = buffer.shift();
      if (next === undefined) {
        if ((await claim()) === 0 && buffer.length === 0) return;
        continue;
      }
      if (buffer.length < CONCURRENCY) void claim(); // prefetch while the buffer runs low
      await Promise.resolve(); // the no-op handler
      pending.push({
        kind: "done",
        id: next.id,
        attempt: next.attempts,
        result: null,
        resultTtlMs: RESULT_TTL_MS,
      });
      requestFlush();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, slot));
  while (flushing) await flushing;
  await flush();
  return completed;
}

async function main(): Promise<void> {
  const name = `soniq_drain_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const backend = postgresBackend(
    { connectionString: url.toString(), poolConfig: { max: CONCURRENCY + 2 } },
    { asyncOutcomes: ASYNC_OUTCOMES },
  );
  try {
    await backend.migrations.apply();
    const singles = 1000;
    const singleStart = performance.now();
    for (let i = 0; i < singles; i++) await backend.jobs.enqueue({ ...job(), queue: "single" }, {});
    const singleMs = performance.now() - singleStart;
    const enqueueStart = performance.now();
    for (let i = 0; i < TOTAL; i += 1000) {
      await backend.jobs.enqueueMany(Array.from({ length: Math.min(1000, TOTAL - i) }, job), {});
    }
    const enqueueMs = performance.now() - enqueueStart;
    const start = performance.now();
    const completed = await drain(backend);
    const ms = performance.now() - start;
    const stats = await backend.jobs.stats({ queue: QUEUE });
    if (completed !== TOTAL || stats.done !== TOTAL) {
      throw new Error(`invalid run: completed ${completed}, done rows ${stats.done}, expected ${TOTAL}`);
    }
    console.log(
      `enqueue (one at a time, awaited): ${singles} jobs in ${singleMs.toFixed(0)} ms = ${Math.round((singles / singleMs) * 1000)} jobs/s`,
    );
    console.log(
      `enqueueMany: ${TOTAL} jobs in ${enqueueMs.toFixed(0)} ms = ${Math.round((TOTAL / enqueueMs) * 1000)} jobs/s`,
    );
    console.log(
      `drain: ${TOTAL} jobs, concurrency ${CONCURRENCY}, claim batch ${CLAIM_BATCH}${ASYNC_OUTCOMES ? ", asyncOutcomes" : ""}: ${ms.toFixed(0)} ms = ${Math.round((TOTAL / ms) * 1000)} jobs/s`,
    );
  } finally {
    await backend.close();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();
