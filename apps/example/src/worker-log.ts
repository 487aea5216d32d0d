/** Readable lines for what a worker does, for the tour and the server's console. */

import type { Worker } from "@soniq/core";
import { shortId as short } from "@soniq/core/ops";

const firstLine = (text: string) => text.split("\n")[0] ?? text;

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
    worker.on("error", ({ error, during }) => print(`worker error during ${during}: ${String(error)}`)),
  ];
  return () => {
    for (const off of offs) off();
  };
}
