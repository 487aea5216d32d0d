/**
 * The leases facet, for leader election: one row per name in soniq_leases. Acquire-or-renew is a single
 * upsert whose update only applies when the caller already holds the lease, it has expired, or (with
 * `takeOver`) its holder is a worker that is stopped or stale by the taker's threshold, so two processes can
 * never both hold it: SQLite serialises the writes.
 */
import type { LeasesFacet } from "@soniq/core/backend";
import { runSync, type SqliteContext } from "./internal/context.js";
import { NOW } from "./internal/sql.js";

export function leasesFacet(ctx: SqliteContext): LeasesFacet {
  return {
    tryAcquire: (name, holder, ttlMs, takeOver) =>
      runSync("leases.tryAcquire", () => {
        const staleAfterMs = takeOver === undefined ? null : Math.round(takeOver.staleAfterMs);
        const row = ctx.statement(ACQUIRE).get({ name, holder, ttlMs: Math.round(ttlMs), staleAfterMs }) as
          | { holder: string }
          | undefined;
        return row?.holder === holder;
      }),
    release: (name, holder) =>
      runSync("leases.release", () => {
        ctx.statement(RELEASE).run(name, holder);
      }),
  };
}

const ACQUIRE = `INSERT INTO soniq_leases (name, holder, expires_at) VALUES (@name, @holder, ${NOW} + @ttlMs)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
  WHERE soniq_leases.holder = excluded.holder OR soniq_leases.expires_at <= ${NOW}
    OR (@staleAfterMs IS NOT NULL AND soniq_leases.holder IN (SELECT id FROM soniq_workers
      WHERE status = 'stopped' OR last_heartbeat < ${NOW} - @staleAfterMs))
  RETURNING holder`;

const RELEASE = "DELETE FROM soniq_leases WHERE name = ? AND holder = ?";
