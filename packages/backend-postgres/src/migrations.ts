/**
 * The migrations facet: drizzle's node-postgres migrator applies `drizzle/` (generated from core's pg schema plus the
 * custom status-guard migration). The migrator itself takes no lock, so concurrent callers would race on
 * creating its bookkeeping table; every run holds `pg_advisory_lock` on one dedicated connection, and the
 * migrator runs on that same connection (so a pool of size 1 cannot deadlock). The connection is destroyed
 * afterwards rather than returned to the pool, which also drops the session lock whatever happened.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type MigrationReport,
  type MigrationStatus,
  type MigrationsFacet,
  SoniqError,
} from "@soniq/core/backend";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate as drizzleMigrate } from "drizzle-orm/node-postgres/migrator";
import type pg from "pg";
import type { PgContext } from "./internal/context.js";
import { sqlState } from "./internal/errors.js";

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

async function apply(ctx: PgContext): Promise<MigrationReport> {
  let client: pg.PoolClient;
  try {
    client = await ctx.pool.connect();
  } catch (err) {
    throw migrationError(err, "migrations.apply");
  }
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [LOCK_KEY]);
    const before = await statusOn(client);
    if (before.pending.length > 0) await drizzleMigrate(drizzle({ client }), { migrationsFolder });
    const after = await statusOn(client);
    return { ...after, appliedNow: before.pending.filter((tag) => after.applied.includes(tag)) };
  } catch (err) {
    throw migrationError(err, "migrations.apply");
  } finally {
    // Destroy, not return: the session-level lock goes with the connection.
    client.release(true);
  }
}

export function migrationsFacet(ctx: PgContext): MigrationsFacet {
  return { apply: () => apply(ctx), status: () => status(ctx) };
}
