/** The workers as core lists them: core derives each one's state (live, stale, stopped). */
import type { WorkerView } from "@soniq/core";
import type { ResolvedDashboardOptions } from "../options.js";

/** `soniq.workers.list()`, with the dashboard's `staleAfterMs` when one was given. */
export function listWorkers(options: ResolvedDashboardOptions): Promise<WorkerView[]> {
  const { soniq, staleAfterMs } = options;
  return soniq.workers.list(staleAfterMs === null ? undefined : { staleAfterMs });
}
