/** Workers with their derived state: live (heartbeat fresh), stale (active but silent), stopped. */
import type { WorkerInfo } from "@soniq/core";
import { notAvailable } from "../errors.js";
import type { Features } from "../features.js";

export type WorkerState = "live" | "stale" | "stopping" | "stopped";

export interface WorkerRow extends WorkerInfo {
  state: WorkerState;
  heartbeatAgeMs: number;
}

export function workerState(w: WorkerInfo, staleAfterMs: number, now: number): WorkerState {
  if (w.status === "stopped") return "stopped";
  if (now - w.lastHeartbeat.getTime() > staleAfterMs) return "stale";
  return w.status === "stopping" ? "stopping" : "live";
}

export async function listWorkerRows(
  features: Features,
  staleAfterMs: number,
  now = Date.now(),
): Promise<{ workers: WorkerRow[]; source: string }> {
  if (!features.workers) throw notAvailable("Listing workers");
  const rows = await features.workers.list();
  const order: Record<WorkerState, number> = { live: 0, stopping: 1, stale: 2, stopped: 3 };
  const workers = rows
    .map((w) => ({
      ...w,
      state: workerState(w, staleAfterMs, now),
      heartbeatAgeMs: now - w.lastHeartbeat.getTime(),
    }))
    .sort((a, b) => order[a.state] - order[b.state] || b.lastHeartbeat.getTime() - a.lastHeartbeat.getTime());
  return { workers, source: features.workers.source };
}
