/**
 * `replicationStatus()`: with `readConnectionString`, the replica's lag as the replica itself sees it. A
 * standby that has replayed all the WAL it received is 0 ms behind (the last replayed commit's time alone
 * would grow while the primary is idle); otherwise the lag is the age of the last replayed commit. A server
 * that is not in recovery (promoted, or not a standby at all) has no lag to report: null.
 */
import type { ReplicationStatus } from "@soniq/core/backend";
import { type PgContext, readQuery } from "./context.js";

const LAG = `SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN NULL
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE GREATEST(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)
  END::float8 AS lag_ms`;

export function replicationStatus(ctx: PgContext): () => Promise<ReplicationStatus> {
  return async () => {
    if (ctx.readPool === ctx.pool) return { readReplica: false, lagMs: null };
    const res = await readQuery<{ lag_ms: number | null }>(ctx, "replicationStatus", { text: LAG });
    const lag = res.rows[0]?.lag_ms ?? null;
    return { readReplica: true, lagMs: lag === null ? null : Math.round(lag) };
  };
}
