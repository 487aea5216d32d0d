/** The errors a worker aborts a running handler's signal with, when it takes the job over. */
import { JobAbortedError, type Running } from "./job-runner.js";

export type AbandonReason = "cancelled" | "lost" | "shutdown";

export function abandonError(why: AbandonReason): JobAbortedError {
  const message =
    why === "cancelled"
      ? "The job was cancelled"
      : why === "lost"
        ? "The job is no longer held by this worker (recovered as stale)"
        : "The worker is shutting down";
  return new JobAbortedError(why, message);
}

export function timeoutError(run: Running): JobAbortedError {
  const ms = run.def?.options.timeoutMs ?? 0;
  const err = new JobAbortedError("timeout", `Job "${run.job.jobName}" timed out after ${ms} ms`);
  err.stack = `${err.name}: ${err.message}`;
  return err;
}
