/**
 * The leases facet, for leader election: one row per name in `soniq_leases`. Acquire-or-renew is one
 * upsert whose update applies only when the caller already holds the lease, it has expired, or (with
 * `takeOver`) its holder is a worker that is stopped or stale by the taker's threshold, so two holders never
 * both succeed; release deletes the caller's row. Every call is one statement in its own transaction, so
 * leases work through a transaction-mode pooler (a session-level advisory lock would stay on whichever server
 * connection the pooler picked).
 */
import type { LeasesFacet } from "@soniq/core/backend";
import { type PgContext, query } from "./internal/context.js";

export function leasesFacet(ctx: PgContext): LeasesFacet {
  return {
    tryAcquire: async (name, holder, ttlMs, takeOver) => {
      const res = await query(ctx, "leases.tryAcquire", {
        name: "soniq_lease_acquire",
        text: ACQUIRE,
        values: [name, holder, ttlMs, takeOver === undefined ? null : takeOver.staleAfterMs],
      });
      return res.rows.length === 1;
    },
    release: async (name, holder) => {
      await query(ctx, "leases.release", {
        name: "soniq_lease_release",
        text: RELEASE,
        values: [name, holder],
      });
    },
  };
}

// A holder that is not a worker id (the scheduler's) never matches the worker read: its lease frees by TTL.
const ACQUIRE = `INSERT INTO soniq_leases AS l (name, holder, expires_at)
  VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000))
  ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
  WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
    OR ($4::float8 IS NOT NULL AND l.holder IN (SELECT w.id::text FROM soniq_workers w
      WHERE w.status = 'stopped' OR w.last_heartbeat < now() - make_interval(secs => $4::float8 / 1000)))
  RETURNING 1`;

const RELEASE = "DELETE FROM soniq_leases WHERE name = $1 AND holder = $2";
