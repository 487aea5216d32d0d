/** cancel: queued or processing -> cancelled. A running handler's late writes are fenced off. */
import type { MemoryStore } from "./store.js";

export function cancel(store: MemoryStore, id: string): boolean {
  const job = store.jobs.get(id);
  if (job === undefined || (job.status !== "queued" && job.status !== "processing")) return false;
  store.transition(job, "cancelled", {}, store.now());
  return true;
}
