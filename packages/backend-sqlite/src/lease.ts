/**
 * Leases for leader election: one row per name in soniq_leases. Acquire-or-renew is a single upsert
 * whose update only applies when the caller already holds the lease or it has expired, so two
 * processes can never both hold it: SQLite serialises the writes.
 */
import type { SqliteContext } from "./context.js";
import { invalidArgument } from "./errors.js";
import { NOW } from "./sql.js";

const ACQUIRE = `INSERT INTO soniq_leases (name, holder, expires_at) VALUES (@name, @holder, ${NOW} + @ttlMs)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
  WHERE soniq_leases.holder = excluded.holder OR soniq_leases.expires_at <= ${NOW}
  RETURNING holder`;

export function tryAcquireLease(ctx: SqliteContext, name: string, holder: string, ttlMs: number): boolean {
  if (typeof name !== "string" || name.length === 0 || typeof holder !== "string" || holder.length === 0) {
    throw invalidArgument("A lease needs a non-empty name and holder.", { name, holder });
  }
  if (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw invalidArgument("Lease ttlMs must be a finite number > 0.", { name, ttlMs });
  }
  const row = ctx.statement(ACQUIRE).get({ name, holder, ttlMs: Math.round(ttlMs) }) as
    | { holder: string }
    | undefined;
  return row?.holder === holder;
}

export function releaseLease(ctx: SqliteContext, name: string, holder: string): void {
  ctx.statement("DELETE FROM soniq_leases WHERE name = ? AND holder = ?").run(name, holder);
}
