/**
 * `sqliteBackend()`: the Backend contract on one better-sqlite3 connection. Every operation is a
 * synchronous better-sqlite3 call made inside the method call (so a `tx` insert joins the caller's
 * open transaction) and handed back as a promise. Each facet lives in its own file; this one wires them.
 * Core's guard (which `Soniq` and the testkit apply) validates and normalises the inputs.
 */
import type { BackendCapabilities, CompleteBackend, RunsFacet } from "@soniq/core/backend";
import { auditFacet } from "./audit.js";
import { deadLettersFacet } from "./dead-letters.js";
import { flowsFacet } from "./flows.js";
import { configureConnection, openDatabase } from "./internal/connection.js";
import { runSync, type SqliteContext, type SqliteDatabase, StatementCache } from "./internal/context.js";
import { Notifier } from "./internal/notifier.js";
import type { SqliteTx } from "./internal/tx.js";
import { jobsFacet } from "./jobs.js";
import { leasesFacet } from "./leases.js";
import { metricsFacet } from "./metrics.js";
import { migrationsFacet } from "./migrations.js";
import { resolveOptions, type SqliteBackendOptions, type SqliteBackendTarget } from "./options.js";
import { queuesFacet } from "./queues.js";
import { runsFacet } from "./runs.js";
import { schedulesFacet } from "./schedules.js";
import { stepsFacet } from "./steps.js";
import { versionsFacet } from "./versions.js";
import { wakeUpsFacet } from "./wake-ups.js";
import { webhooksFacet } from "./webhooks.js";
import { workersFacet } from "./workers.js";

/** The SQLite backend: `enqueue({ tx })` takes a better-sqlite3 Database or a Drizzle handle on it. */
export type SqliteBackend = CompleteBackend<SqliteTx>;

const CAPABILITIES: BackendCapabilities = Object.freeze({
  // Wake-ups reach subscribers of this backend object only; other processes poll.
  notify: false,
  transactionalEnqueue: true,
  // Lease rows in soniq_leases are enforced by the database across processes.
  advisoryLocks: true,
  multiProcess: true,
});

/** An SQLite backend. Pass `{ filename }` to let it open (and later close) the file, or `{ database }`. */
export function sqliteBackend(
  target: SqliteBackendTarget,
  options: SqliteBackendOptions = {},
): SqliteBackend {
  return buildSqliteBackend(target, options);
}

/** Passes the runs facet through before it is installed (the `/testing` entry's fault hook). */
export type SqliteRunsWrapper = (runs: RunsFacet, ctx: SqliteContext) => RunsFacet;

/** `sqliteBackend()` with its runs facet passed through `wrapRuns`; for `testing.ts`, not exported by index.ts. */
export function buildSqliteBackend(
  target: SqliteBackendTarget,
  options: SqliteBackendOptions = {},
  wrapRuns?: SqliteRunsWrapper,
): SqliteBackend {
  const resolved = resolveOptions(target, options);
  const owned = resolved.filename !== null;
  const db: SqliteDatabase = resolved.database ?? openDatabase(resolved.filename ?? ":memory:", resolved);
  if (!owned && resolved.configureDatabase) configureConnection(db, resolved);

  const statements = new StatementCache();
  const notifier = new Notifier();
  const ctx: SqliteContext = {
    db,
    statement: (sql, on = db) => statements.get(on, sql),
    generated: (key, build) => statements.get(db, key, build),
    notify: (queue) => notifier.notify(queue),
    finished: (ids) => notifier.finished(ids),
  };
  const runs = runsFacet(ctx);
  let closed: Promise<void> | undefined;
  return {
    name: "sqlite",
    capabilities: CAPABILITIES,
    migrations: migrationsFacet(db),
    jobs: jobsFacet(ctx),
    runs: wrapRuns === undefined ? runs : wrapRuns(runs, ctx),
    deadLetters: deadLettersFacet(ctx),
    workers: workersFacet(ctx),
    leases: leasesFacet(ctx),
    wakeUps: wakeUpsFacet(notifier),
    schedules: schedulesFacet(ctx),
    queues: queuesFacet(ctx),
    audit: auditFacet(ctx),
    metrics: metricsFacet(ctx),
    flows: flowsFacet(ctx),
    webhooks: webhooksFacet(ctx),
    steps: stepsFacet(ctx),
    versions: versionsFacet(ctx),
    close: () => {
      closed ??= runSync("close", () => {
        notifier.clear();
        if (owned && db.open) db.close();
      });
      return closed;
    },
  };
}
