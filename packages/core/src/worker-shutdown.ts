/**
 * Pieces of the worker's stop sequence (the states are in `worker.ts`'s docblock): giving back jobs
 * claimed but never started, and waiting for running handlers no longer than the shutdown timeout.
 */
import type { TypedEmitter } from "./events.js";
import type { Runtime } from "./runtime.js";
import type { Job } from "./types.js";
import type { WorkerEvents } from "./worker-events.js";

/** Why a claimed, never-started job went back at shutdown: logged, never written to the row. */
const RELEASED = "released unstarted at worker shutdown";

/** Gives back jobs claimed but never started; a failed give-back is logged and left to stale recovery. */
export function releaseUnstarted(
  rt: Runtime,
  events: TypedEmitter<WorkerEvents>,
  jobs: Job[],
): Promise<unknown> {
  const { backend, logger } = rt;
  return Promise.all(
    jobs.map((job) =>
      // The claim counted an attempt that never ran: nack refunds it (attempts - 1), so a job with
      // maxAttempts 1 is not dead-lettered by its next claim; last_error stays as it was.
      backend
        .nack({ id: job.id, attempt: job.attempts }, { refundAttempt: true })
        .then((applied) => {
          if (applied) logger.info({ jobId: job.id, reason: RELEASED }, "job released");
        })
        .catch((error: unknown) => {
          logger.error(
            { err: error, jobId: job.id },
            "could not give back an unstarted job; stale recovery will",
          );
          events.emit("error", { error, during: "release" });
        }),
    ),
  );
}

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
  return rt.backend.stopWorker(workerId).catch((err: unknown) => {
    rt.logger.warn({ err, workerId }, "could not mark the worker stopped");
  });
}
