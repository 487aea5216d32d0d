/** Readable lines for what a worker does, for the tour and the server's console. */

import type { Worker } from "@soniq/core";
import { shortId as short } from "@soniq/core/ops";

const firstLine = (text: string) => text.split("\n")[0] ?? text;

/** "800 ms", "1.5 s", "30 days". */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} days`;
}

export function logWorkerEvents(worker: Worker, print: (line: string) => void): () => void {
  const offs = [
    worker.on("job:done", ({ job, result }) =>
      print(`${job.jobName} ${short(job.id)} done on attempt ${job.attempts}: ${JSON.stringify(result)}`),
    ),
    worker.on("job:failed", ({ job, error, delayMs }) =>
      print(
        `${job.jobName} ${short(job.id)} failed attempt ${job.attempts}/${job.maxAttempts}: ${firstLine(error)}; retry in ${delayMs} ms`,
      ),
    ),
    worker.on("job:dead_letter", ({ job, reason, error }) =>
      print(
        `${job.jobName} ${short(job.id)} failed attempt ${job.attempts}/${job.maxAttempts}: ${firstLine(error)}; moved to the dead-letter table (${reason})`,
      ),
    ),
    // A durable wait (ctx.sleep, ctx.waitForSignal) of 1 s or more, or a snooze: the job is queued again, due later.
    worker.on("job:snoozed", ({ job, delayMs }) =>
      print(
        `${job.jobName} ${short(job.id)} back in the queue, due in ${duration(delayMs)}: no worker slot held, no attempt spent`,
      ),
    ),
    worker.on("error", ({ error, during }) => print(`worker error during ${during}: ${String(error)}`)),
  ];
  return () => {
    for (const off of offs) off();
  };
}
