/** The task registry: which task names each worker serves (observability only). */
import { invalidArgument, requireString } from "./errors.js";
import type { MemoryStore } from "./store.js";

export function registerTaskNames(store: MemoryStore, workerId: string, names: readonly string[]): void {
  requireString(workerId, "workerId");
  if (!Array.isArray(names)) throw invalidArgument("names must be an array of task names.", { names });
  const now = store.now();
  for (const taskName of names) {
    requireString(taskName, "task name");
    store.taskNames.set(`${taskName}\u0000${workerId}`, { taskName, workerId, lastSeenAt: now });
  }
}

export function listTaskNames(
  store: MemoryStore,
): { taskName: string; workerId: string; lastSeenAt: Date }[] {
  return [...store.taskNames.values()]
    .sort((a, b) => compare(a.taskName, b.taskName) || compare(a.workerId, b.workerId))
    .map((r) => ({ taskName: r.taskName, workerId: r.workerId, lastSeenAt: new Date(r.lastSeenAt) }));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
