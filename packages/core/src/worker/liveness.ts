/**
 * When a worker counts as alive, suspect or stale, in one place: the worker options' defaults, recovery,
 * explain and the dashboard's worker states read these.
 *
 * `staleAfterMs` defaults to 60 s. Soniq workers heartbeat every 5 s, so the threshold only has to outlast
 * missed heartbeats (a GC pause, a database failover, a handler blocking the event loop), never a job's
 * duration: 60 s is twelve missed beats. Peers without a per-worker heartbeat must wait longer than their
 * longest job (graphile-worker re-attempts jobs locked for 4 h, River rescues running jobs after 1 h, pg-boss
 * expires an active job after 15 min); BullMQ, which renews a lock every 15 s, calls a job stalled after 30 s
 * and is known to run CPU-bound jobs twice. 60 s keeps Soniq's recovery of a killed worker's jobs near a minute
 * while tolerating a minute-long stall (the old 5 min left a killed worker "live" for five).
 */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 5000;
export const DEFAULT_STALE_AFTER_MS = 60_000;

/**
 * The heartbeat age past which a worker not yet stale is suspect (three missed heartbeats, and at most half
 * of `staleAfterMs`): explain says so, well before recovery would requeue its jobs.
 */
export function suspectAfterMs(heartbeatIntervalMs: number, staleAfterMs: number): number {
  return Math.max(1, Math.min(3 * heartbeatIntervalMs, Math.floor(staleAfterMs / 2)));
}
