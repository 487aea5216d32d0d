/**
 * Soniq on PostgreSQL (`@soniq/backend-postgres`), on the same server as the peers. Soniq's packages are
 * loaded on first use, so a package that fails to load makes its own rows INVALID, not the whole bench.
 */

import type { PostgresBackendOptions } from "@soniq/backend-postgres";
import type { Plugin, SoniqOptions, WorkerOptions } from "@soniq/core";
import { benchClient, harnessPool } from "../pg-admin.js";
import type { CountQuery } from "./soniq-session.js";
import type { Counts, RetentionSweep, StepCounts, SystemAdapter, SystemTarget } from "./types.js";
import { TASK_NAMES } from "./types.js";

const COUNTS = `SELECT
  (SELECT count(*) FROM soniq_jobs WHERE job_name = $1 AND status IN ('queued', 'processing'))::int AS pending,
  (SELECT count(*) FROM soniq_jobs WHERE job_name = $1 AND status = 'done')::int AS done,
  (SELECT count(*) FROM soniq_dead_letter_jobs WHERE job_name = $1)::int AS failed,
  (SELECT count(DISTINCT i) FROM (
     SELECT args->>'i' AS i FROM soniq_jobs WHERE job_name = $1
     UNION ALL SELECT args->>'i' FROM soniq_dead_letter_jobs WHERE job_name = $1) AS all_rows)::int AS distinct`;

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("Soniq on Postgres needs a Postgres database");
  return target.databaseUrl;
}

async function prepare(target: SystemTarget): Promise<void> {
  const { postgresBackend } = await import("@soniq/backend-postgres");
  const backend = postgresBackend({ connectionString: requireUrl(target) });
  try {
    await backend.migrations.apply();
  } finally {
    await backend.close();
  }
}

/** W9: the done step checkpoints of the jobs of one name (a sleep's checkpoint is kind `sleep`). */
const STEP_COUNTS = `SELECT count(*)::int AS done FROM soniq_job_steps s JOIN soniq_jobs j ON j.id = s.job_id
  WHERE j.job_name = $1 AND s.kind = 'step' AND s.state = 'done'`;

/** Each EXISTS runs on a partial index (status 'queued' or 'processing'). */
const SETTLED = `SELECT NOT EXISTS (SELECT 1 FROM soniq_jobs WHERE status = 'queued' AND job_name = $1)
  AND NOT EXISTS (SELECT 1 FROM soniq_jobs WHERE status = 'processing' AND job_name = $1) AS settled`;

/**
 * W5's retained rows, as a drain leaves them (done, one attempt, a worker id, a producer stamp, expiring
 * an hour after they finished), under a job name the counts ignore. The retained rows finish now (so no
 * maintenance removes them during the run); the sweep's expired rows finished two hours ago (so their hour
 * ran out an hour ago). Vacuumed and analysed afterwards, as autovacuum would have done by the time a table
 * holds this many, and checkpointed (when the role may).
 */
const SEED_DONE = `INSERT INTO soniq_jobs (job_name, args, status, attempts, max_attempts, queue, priority,
  scheduled_at, expires_at, producer_id, worker_id, created_at, updated_at)
SELECT $1::text, jsonb_build_object('i', g), 'done', 1, 3, 'default', 100,
  s.t, s.t + interval '1 hour', 'bench-seed', s.w, s.t, s.t
FROM generate_series(0, $2::int - 1) AS g,
  (SELECT now() - $3::interval AS t, gen_random_uuid() AS w) AS s`;

async function seed(target: SystemTarget, n: number, jobName: string, finishedAgo: string): Promise<void> {
  const client = benchClient(requireUrl(target), "soniq W5 seed");
  await client.connect();
  try {
    await client.query(SEED_DONE, [jobName, n, finishedAgo]);
    await client.query("VACUUM (ANALYZE) soniq_jobs");
    // The seed wrote a few hundred MB of WAL: flush it now, or a checkpoint it triggers lands in the drain.
    await client.query("CHECKPOINT").catch((err: unknown) => {
      if ((err as { code?: unknown }).code !== "42501") throw err; // no privilege: go on without
    });
  } finally {
    await client.end();
  }
}

const seedDone = (target: SystemTarget, n: number) => seed(target, n, "bench.retained", "0 seconds");
const seedExpired = (target: SystemTarget, n: number) => seed(target, n, "bench.expired", "2 hours");

/**
 * The retention sweep a worker's maintenance runs (upkeep.ts: `backend.jobs.deleteExpired()`), called once
 * through a Soniq instance's guarded backend. The pool is warmed first (a migrations status read), so the
 * sweep's time has no connection set-up in it.
 */
async function openSweep(target: SystemTarget): Promise<RetentionSweep> {
  const [{ postgresBackend }, { Soniq }] = await Promise.all([
    import("@soniq/backend-postgres"),
    import("@soniq/core"),
  ]);
  const soniq = new Soniq({ backend: postgresBackend({ connectionString: requireUrl(target) }) });
  try {
    await soniq.backend.migrations.status();
  } catch (err) {
    await soniq.close();
    throw err;
  }
  return { sweep: () => soniq.backend.jobs.deleteExpired(), close: () => soniq.close() };
}

/** The verification counts, on a one-connection pool of their own; `keepsDone: false` when done rows are deleted. */
function countQuery(url: string, keepsDone = true): { query: CountQuery; end: () => Promise<void> } {
  const pool = harnessPool(url, "soniq counts pool");
  const query: CountQuery = {
    async counts(kind) {
      const row = (await pool.query<Counts>(COUNTS, [TASK_NAMES[kind]])).rows[0];
      if (!row) throw new Error("soniq counts returned no row");
      // Deleted at completion: a done job is an absent row, so `done` is not countable (as graphile-worker's).
      return keepsDone ? row : { ...row, done: null };
    },
    async settled(kind) {
      const res = await pool.query<{ settled: boolean }>(SETTLED, [TASK_NAMES[kind]]);
      return res.rows[0]?.settled === true;
    },
    async stepCounts(kind) {
      const row = (await pool.query<StepCounts>(STEP_COUNTS, [TASK_NAMES[kind]])).rows[0];
      if (!row) throw new Error("soniq step counts returned no row");
      return row;
    },
  };
  return { query, end: () => pool.end() };
}

/** What a row of Soniq's app API on Postgres sets on top of the defaults (the main row sets nothing). */
interface AppRow {
  id: string;
  label: string;
  notes: string;
  optional?: true;
  /** The W8 workflow row (not for rows whose settings change what a flow keeps). */
  flows?: true;
  /** The W9/W9s row: durable steps and sleep inside a job. */
  steps?: true;
  /** Extra modules to load before the clock starts. */
  preload?: () => Promise<unknown>;
  backendOptions?: PostgresBackendOptions;
  workerOptions?: Omit<WorkerOptions, "concurrency">;
  soniqOptions?: Omit<SoniqOptions, "backend">;
  plugins?: () => Promise<Plugin[]>;
  /** false: a done job's row is deleted, so `done` is not countable. */
  keepsDone?: false;
}

function appRow(row: AppRow): SystemAdapter {
  return {
    id: row.id,
    label: row.label,
    preload: () =>
      Promise.all([import("@soniq/backend-postgres"), import("./soniq-session.js"), row.preload?.()]),
    storage: "postgres",
    inProcess: false,
    ...(row.optional ? { optional: true } : {}),
    seedDone,
    seedExpired,
    openSweep,
    manyQueues: true,
    immediateRetries: true,
    queueLimits: true,
    asyncEnqueue: true,
    ...(row.flows ? { flows: true } : {}),
    ...(row.steps ? { steps: true } : {}),
    notes: row.notes,
    prepare,
    async open(target) {
      const url = requireUrl(target);
      const [{ postgresBackend }, { SoniqAppSession }, plugins] = await Promise.all([
        import("@soniq/backend-postgres"),
        import("./soniq-session.js"),
        row.plugins?.() ?? [],
      ]);
      const counts = countQuery(url, row.keepsDone ?? true);
      const backend = postgresBackend({ connectionString: url }, row.backendOptions);
      return new SoniqAppSession(
        backend,
        counts.query,
        counts.end,
        row.workerOptions,
        plugins,
        row.soniqOptions,
      );
    },
  };
}

export const soniqPostgresSystem = appRow({
  id: "soniq-postgres",
  label: "Soniq postgres",
  flows: true,
  steps: true,
  notes: "new Soniq({ backend: postgresBackend(...) }) with default settings, soniq.worker({ concurrency })",
});

export const soniqPostgresContractSystem: SystemAdapter = {
  id: "soniq-postgres-contract",
  label: "Soniq postgres (contract loop)",
  preload: () => Promise.all([import("@soniq/backend-postgres"), import("./soniq-session.js")]),
  storage: "postgres",
  inProcess: false,
  optional: true,
  seedDone,
  seedExpired,
  openSweep,
  manyQueues: true,
  immediateRetries: true,
  notes:
    "diagnostic: @soniq/backend-postgres driven by a minimal loop on the Backend contract, not core's worker",
  prepare,
  async open(target) {
    const url = requireUrl(target);
    const [{ postgresBackend }, { SoniqContractSession }] = await Promise.all([
      import("@soniq/backend-postgres"),
      import("./soniq-session.js"),
    ]);
    const counts = countQuery(url);
    return new SoniqContractSession(postgresBackend({ connectionString: url }), counts.query, counts.end);
  },
};

export const soniqPostgresBatch500System = appRow({
  id: "soniq-postgres-b500",
  label: "Soniq postgres (batchSize 500)",
  optional: true,
  flows: true,
  notes: "diagnostic: the Soniq postgres row with worker({ batchSize: 500, completeBatchSize: 500 })",
  workerOptions: { batchSize: 500, completeBatchSize: 500 },
});

export const soniqPostgresAsyncSystem = appRow({
  id: "soniq-postgres-async",
  label: "Soniq postgres (asyncOutcomes)",
  optional: true,
  flows: true,
  notes: "diagnostic: the Soniq postgres row with postgresBackend(..., { asyncOutcomes: true })",
  backendOptions: { asyncOutcomes: true },
});

export const soniqPostgresTtl0System = appRow({
  id: "soniq-postgres-ttl0",
  label: "Soniq postgres (resultTtlMs 0)",
  optional: true,
  notes:
    "the Soniq postgres row with new Soniq({ resultTtlMs: 0 }): a done job's row is deleted at completion, as graphile-worker deletes it (no result() to wait for)",
  soniqOptions: { resultTtlMs: 0 },
  keepsDone: false,
});

/**
 * The `soniq-postgres` row with `@soniq/opentelemetry` on: an SDK tracer provider whose batch processor hands
 * every span to an exporter that drops it, an SDK meter provider, and an AsyncLocalStorage context manager, as
 * an application with tracing configured has them. Measures what tracing costs the producer and the worker.
 */
async function otelPlugin(sampling: "all" | "none" = "all"): Promise<Plugin> {
  const [api, { AsyncLocalStorageContextManager }, sdkTrace, { MeterProvider }, { openTelemetry }] =
    await Promise.all([
      import("@opentelemetry/api"),
      import("@opentelemetry/context-async-hooks"),
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/sdk-metrics"),
      import("@soniq/opentelemetry"),
    ]);
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = {
    export: (_spans: unknown[], done: (result: { code: number }) => void) => done({ code: 0 }),
    shutdown: () => Promise.resolve(),
  };
  const tracerProvider = new sdkTrace.TracerProvider({
    spanProcessors: [new sdkTrace.BatchSpanProcessor({ exporter })],
    // "none": the SDK's default parent-based sampler with every root sampled out (each enqueue batch's send
    // span decides, and every run honours it): what a job costs that a sampler dropped.
    ...(sampling === "none"
      ? { sampler: new sdkTrace.ParentBasedSampler({ root: new sdkTrace.AlwaysOffSampler() }) }
      : {}),
  });
  return openTelemetry({ tracerProvider, meterProvider: new MeterProvider() });
}

export const soniqPostgresOtelSystem = appRow({
  id: "soniq-postgres-otel",
  label: "Soniq postgres (OpenTelemetry)",
  optional: true,
  notes:
    "the Soniq postgres row with soniq.use(openTelemetry(...)): SDK tracer provider, batch processor, an exporter that drops spans",
  preload: () => Promise.all([import("@soniq/opentelemetry"), import("@opentelemetry/sdk-trace")]),
  plugins: async () => [await otelPlugin()],
});

export const soniqPostgresOtelSampledOutSystem = appRow({
  id: "soniq-postgres-otel-sampled-out",
  label: "Soniq postgres (OpenTelemetry, sampled out)",
  optional: true,
  notes:
    "the OpenTelemetry row with a sampler that drops every trace at its root (ParentBased, root AlwaysOff): no run starts a span",
  preload: () => Promise.all([import("@soniq/opentelemetry"), import("@opentelemetry/sdk-trace")]),
  plugins: async () => [await otelPlugin("none")],
});
