/**
 * `soniq.workers.list()`: the registered workers as operators see them, each with its derived `state`.
 * The liveness rule lives here once; explain, the CLI and the dashboard all read it through this file:
 * - `stopped`: the worker marked itself stopped (or recovery declared it stale and stopped it);
 * - `stale`: not stopped, but its last heartbeat is older than `staleAfterMs` (its jobs are due for
 *   recovery by a peer);
 * - `live`: not stopped and heard from within `staleAfterMs`.
 */

import type { WorkerInfo } from "../common/types.js";
import type { GuardedBackend } from "../contract/index.js";
import { filterObject, invalid } from "../jobs/queries.js";
import { DEFAULT_STALE_AFTER_MS } from "./liveness.js";

export const WORKER_LIVENESS = ["live", "stale", "stopped"] as const;
/** A worker's derived state (see the top of this file for the rule). */
export type WorkerLiveness = (typeof WORKER_LIVENESS)[number];

/** One entry of `soniq.workers.list()`: the stored row plus what core derives from it. */
export interface WorkerView extends WorkerInfo {
  state: WorkerLiveness;
  /** Milliseconds since the last heartbeat, at the time of the call. */
  heartbeatAgeMs: number;
  /** Job names this worker registered handlers for, sorted. */
  jobNames: string[];
  /** The args version each of those handlers takes (DESIGN.md section 20); null: unversioned. */
  jobVersions: Record<string, number | null>;
}

export interface WorkerListOptions {
  /** A worker silent for longer is `stale`. Default: the workers' default `staleAfterMs` (60000, `DEFAULT_STALE_AFTER_MS`). */
  staleAfterMs?: number;
}

/** The one liveness rule. */
export function workerLiveness(worker: WorkerInfo, now: number, staleAfterMs: number): WorkerLiveness {
  if (worker.status === "stopped") return "stopped";
  return now - worker.lastHeartbeat.getTime() > staleAfterMs ? "stale" : "live";
}

const ORDER: Record<WorkerLiveness, number> = { live: 0, stale: 1, stopped: 2 };

/** Every worker with its state and job names: live first, then stale, then stopped; newest heartbeat first. */
export async function listWorkerViews(
  backend: GuardedBackend<unknown>,
  now: number,
  staleAfterMs: number,
): Promise<WorkerView[]> {
  const [rows, names] = await Promise.all([backend.workers.list(), backend.workers.listTaskNames()]);
  const byWorker = new Map<string, string[]>();
  const versions = new Map<string, Record<string, number | null>>();
  for (const n of names) {
    const list = byWorker.get(n.workerId);
    if (list) list.push(n.taskName);
    else byWorker.set(n.workerId, [n.taskName]);
    const v = versions.get(n.workerId) ?? {};
    versions.set(n.workerId, v);
    v[n.taskName] = n.version;
  }
  return rows
    .map((w) => ({
      ...w,
      state: workerLiveness(w, now, staleAfterMs),
      heartbeatAgeMs: Math.max(0, now - w.lastHeartbeat.getTime()),
      jobNames: [...new Set(byWorker.get(w.id) ?? [])].sort(),
      jobVersions: versions.get(w.id) ?? {},
    }))
    .sort((a, b) => ORDER[a.state] - ORDER[b.state] || b.lastHeartbeat.getTime() - a.lastHeartbeat.getTime());
}

/** `soniq.workers`: the registered workers as operators see them. */
export class WorkerService {
  readonly #backend: GuardedBackend<unknown>;
  readonly #now: () => number;

  constructor(backend: GuardedBackend<unknown>, now: () => number) {
    this.#backend = backend;
    this.#now = now;
  }

  /**
   * Every registered worker (stopped ones included) with its derived `state`, heartbeat age and job
   * names: live first, then stale, then stopped.
   */
  list(options?: WorkerListOptions): Promise<WorkerView[]> {
    try {
      const what = "workers.list(options)";
      const o = filterObject(options, what, ["staleAfterMs"]);
      const staleAfterMs = o.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
      if (typeof staleAfterMs !== "number" || !Number.isSafeInteger(staleAfterMs) || staleAfterMs < 1) {
        throw invalid(`${what}.staleAfterMs`, "expected a positive integer (milliseconds)", staleAfterMs);
      }
      return listWorkerViews(this.#backend, this.#now(), staleAfterMs);
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
