/**
 * The migrations facet: applies `drizzle/` (generated from core's pg schema plus the custom status-guard
 * and claim-function migrations) with drizzle's files and bookkeeping table (`drizzle.__drizzle_migrations`, the rule drizzle's
 * migrator follows: every entry newer than the newest recorded `created_at`). The whole run is one
 * transaction that first takes `pg_advisory_xact_lock`, so concurrent callers serialise, a failure leaves
 * nothing half applied, and it works through a transaction-mode pooler (a session-level lock would not:
 * the pooler may run the unlock on another server connection). drizzle's own migrator is not used because
 * it creates its table outside its transaction.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type MigrationReport,
  type MigrationStatus,
  type MigrationsFacet,
  SoniqError,
} from "@soniq/core/backend";
import { readMigrationFiles } from "drizzle-orm/migrator";
import type pg from "pg";
import type { PgContext } from "./internal/context.js";
import { sqlState } from "./internal/errors.js";
import { inTransaction } from "./internal/tx.js";

export function migrationsFacet(ctx: PgContext): MigrationsFacet {
  return {
    apply: () => inTransaction(ctx, (err) => migrationError(err, "migrations.apply"), apply),
    status: () => status(ctx),
  };
}

/** Every pending migration, in one transaction under the migrations lock. */
async function apply(client: pg.PoolClient): Promise<MigrationReport> {
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [LOCK_KEY]);
  await client.query("CREATE SCHEMA IF NOT EXISTS drizzle");
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
  );
  const before = await statusOn(client);
  const pending = new Set(
    readJournal()
      .filter((e) => before.pending.includes(e.tag))
      .map((e) => e.when),
  );
  for (const migration of readMigrationFiles({ migrationsFolder })) {
    if (!pending.has(migration.folderMillis)) continue;
    for (const statement of migration.sql) await client.query(statement);
    await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES ($1, $2)`, [
      migration.hash,
      migration.folderMillis,
    ]);
  }
  const after = await statusOn(client);
  return { ...after, appliedNow: before.pending.filter((tag) => after.applied.includes(tag)) };
}

async function status(ctx: PgContext): Promise<MigrationStatus> {
  const client = await ctx.pool.connect();
  try {
    return await statusOn(client);
  } catch (err) {
    throw migrationError(err, "migrations.status");
  } finally {
    client.release();
  }
}

/** `drizzle/` beside `src/` and `dist/` alike (this file sits one level below the package root in both). */
export const migrationsFolder = fileURLToPath(new URL("../drizzle", import.meta.url));

const MIGRATIONS_TABLE = "drizzle.__drizzle_migrations";
const LOCK_KEY = "soniq.migrations";

interface JournalEntry {
  tag: string;
  when: number;
}

function readJournal(): JournalEntry[] {
  const raw: unknown = JSON.parse(readFileSync(`${migrationsFolder}/meta/_journal.json`, "utf8"));
  const entries = (raw as { entries?: unknown }).entries;
  if (!Array.isArray(entries)) throw new Error("drizzle/meta/_journal.json has no entries");
  return entries.map((e: { tag: string; when: number }) => ({ tag: String(e.tag), when: Number(e.when) }));
}

/** drizzle applies every journal entry newer than the newest `created_at` it recorded; mirror that rule. */
async function statusOn(client: pg.ClientBase): Promise<MigrationStatus> {
  const journal = readJournal();
  let newest = Number.NEGATIVE_INFINITY;
  try {
    const res = await client.query<{ newest: string | null }>(
      `SELECT max(created_at)::text AS newest FROM ${MIGRATIONS_TABLE}`,
    );
    if (res.rows[0]?.newest != null) newest = Number(res.rows[0].newest);
  } catch (err) {
    // 42P01 / 3F000: the bookkeeping table or schema does not exist yet, so nothing is applied.
    if (sqlState(err) !== "42P01" && sqlState(err) !== "3F000") throw err;
  }
  return {
    applied: journal.filter((e) => e.when <= newest).map((e) => e.tag),
    pending: journal.filter((e) => e.when > newest).map((e) => e.tag),
  };
}

function migrationError(err: unknown, operation: string): SoniqError {
  const message = err instanceof Error ? err.message : String(err);
  return new SoniqError("SONIQ_MIGRATION_FAILED", `${operation} failed: ${message}`, {
    context: { migrationsFolder, sqlState: sqlState(err) },
    cause: err,
  });
}
