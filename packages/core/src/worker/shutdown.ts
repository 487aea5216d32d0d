/**
 * Pieces of the worker's stop sequence (the states are in `worker.ts`'s docblock): waiting for running
 * handlers no longer than the shutdown timeout, and marking the worker row stopped. Jobs claimed but
 * never started are given back through the outcome writer (`release`).
 */
import type { Runtime } from "../app/runtime.js";

/** Resolves when `done` does or after `ms`, whichever is first; the timer never holds the process open. */
export async function waitAtMost(done: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([done, timedOut]);
  clearTimeout(timer);
}

/** Marks the worker row stopped; a failure is logged, never thrown (the stop goes on). */
export function markStopped(rt: Runtime, workerId: string): Promise<void> {
  return rt.backend.workers.stop(workerId).catch((err: unknown) => {
    rt.logger.warn({ err, workerId }, "could not mark the worker stopped");
  });
}
