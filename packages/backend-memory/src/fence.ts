import type { JobRef } from "@soniq/core";
import type { JobRecord } from "./rows.js";
import type { MemoryStore } from "./store.js";

/**
 * The row a worker-side write may touch: still processing, with the attempts its claim gave it.
 * A late write after cancel, stale recovery or a re-claim finds nothing and becomes a no-op.
 */
export function claimedJob(store: MemoryStore, ref: JobRef): JobRecord | null {
  const job = store.jobs.get(ref?.id);
  if (job === undefined || job.status !== "processing" || job.attempts !== ref.attempt) return null;
  return job;
}
