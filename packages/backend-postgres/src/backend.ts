/**
 * `postgresBackend`: the Backend contract on PostgreSQL. This file is wiring only; each facet is built by
 * its own file (migrations.ts, jobs.ts, runs.ts, dead-letters.ts, workers.ts, leases.ts, wake-ups.ts, steps.ts, ...)
 * from the shared context.
 */
import type { BackendCapabilities, CompleteBackend, RunsFacet } from "@soniq/core/backend";
import { auditFacet } from "./audit.js";
import { deadLettersFacet } from "./dead-letters.js";
import { flowsFacet } from "./flows.js";
import { type PgContext, query, StatementNaming } from "./internal/context.js";
import { WakeUpChannel } from "./internal/listen-client.js";
import { resolveConnection } from "./internal/pool.js";
import { LimitedQueues } from "./internal/queue-limits.js";
import { replicationStatus } from "./internal/replication.js";
import type { PgTx } from "./internal/tx.js";
import { jobsFacet } from "./jobs.js";
import { leasesFacet } from "./leases.js";
import { metricsFacet } from "./metrics.js";
import { migrationsFacet } from "./migrations.js";
import type { PostgresBackendOptions, PostgresConnection } from "./options.js";
import { queuesFacet } from "./queues.js";
import { runsFacet } from "./runs.js";
import { schedulesFacet } from "./schedules.js";
import { stepsFacet } from "./steps.js";
import { versionsFacet } from "./versions.js";
import { wakeUpsFacet } from "./wake-ups.js";
import { webhooksFacet } from "./webhooks.js";
import { workersFacet } from "./workers.js";

function capabilities(options: PostgresBackendOptions): BackendCapabilities {
  return Object.freeze({
    notify: options.listen !== "poll",
    transactionalEnqueue: true,
    // Leases are rows in soniq_leases (pooler-safe), enforced by the database across processes.
    advisoryLocks: true,
    multiProcess: true,
  });
}

/** The Postgres backend's type: a `Backend` whose `tx` is a pg client or a Drizzle db / transaction. */
export type PostgresBackend = CompleteBackend<PgTx>;

export function postgresBackend(
  connection: PostgresConnection,
  options: PostgresBackendOptions = {},
): PostgresBackend {
  return buildPostgresBackend(connection, options);
}

/** Passes the runs facet through before it is installed (the `/testing` entry's fault hook). */
export type PostgresRunsWrapper = (runs: RunsFacet, ctx: PgContext) => RunsFacet;

/** `postgresBackend()` with its runs facet passed through `wrapRuns`; for `testing.ts`, not exported by index.ts. */
export function buildPostgresBackend(
  connection: PostgresConnection,
  options: PostgresBackendOptions = {},
  wrapRuns?: PostgresRunsWrapper,
): PostgresBackend {
  const resolved = resolveConnection(connection, options);
  const ctx: PgContext = {
    pool: resolved.pool,
    readPool: resolved.readPool,
    naming: new StatementNaming(options.preparedStatements ?? "auto"),
    asyncOutcomes: options.asyncOutcomes === true,
    limits: new LimitedQueues(),
  };
  const wakeUps = new WakeUpChannel(
    resolved.listenConfig,
    options.listen ?? "auto",
    async (channel, payload) => {
      await query(ctx, "wakeUps.subscribe", { text: "SELECT pg_notify($1, $2)", values: [channel, payload] });
    },
  );
  const runs = runsFacet(ctx);
  let closing: Promise<void> | undefined;

  const close = async (): Promise<void> => {
    const results = await Promise.allSettled([
      wakeUps.close(),
      resolved.ownsPool ? resolved.pool.end() : Promise.resolve(),
      resolved.readPool !== resolved.pool ? resolved.readPool.end() : Promise.resolve(),
    ]);
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failures.length > 0) {
      throw new AggregateError(
        failures.map((f) => f.reason),
        "postgresBackend close() had failures",
      );
    }
  };

  return {
    name: "postgres",
    capabilities: capabilities(options),
    migrations: migrationsFacet(ctx),
    jobs: jobsFacet(ctx),
    runs: wrapRuns === undefined ? runs : wrapRuns(runs, ctx),
    deadLetters: deadLettersFacet(ctx),
    workers: workersFacet(ctx),
    leases: leasesFacet(ctx),
    wakeUps: wakeUpsFacet(wakeUps),
    schedules: schedulesFacet(ctx),
    queues: queuesFacet(ctx),
    audit: auditFacet(ctx),
    metrics: metricsFacet(ctx),
    flows: flowsFacet(ctx),
    webhooks: webhooksFacet(ctx),
    steps: stepsFacet(ctx),
    versions: versionsFacet(ctx),
    replicationStatus: replicationStatus(ctx),
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
