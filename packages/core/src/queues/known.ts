/**
 * Which queue names exist, for the queue controls: pausing, resuming or configuring a name nothing knows is
 * almost always a typo (`soniq queues pause emials`), and doing it anyway would report success, write an
 * audit row and leave a phantom queue in every listing. A name is known when a job, a dead letter or a
 * settings row has it (`queues.list()`), a worker row names it, or this app declares it (a job definition's
 * queue, the instance's default queue). `{ create: true }` is how an operator sets up a queue before its
 * first job on purpose.
 */

import { SoniqError } from "../common/errors.js";
import type { GuardedBackend } from "../contract/index.js";
import { invalid } from "../jobs/queries.js";

/** `create` from a queue control's options: absent is false; anything but a boolean is refused. */
export function createFlag(options: unknown, what: string): boolean {
  const create = (options as { create?: unknown } | undefined)?.create;
  if (create === undefined) return false;
  if (typeof create !== "boolean") throw invalid(`${what}.create`, "expected true or false", create);
  return create;
}

/** Every queue name the storage knows: with jobs, dead letters or settings, or named by a worker row. */
async function storedQueueNames(backend: GuardedBackend<unknown>): Promise<Set<string>> {
  const [queues, workers] = await Promise.all([
    backend.supports("queues") ? backend.queues.list({ exactCountsUpTo: 1 }) : [],
    backend.workers.list(),
  ]);
  const names = new Set(queues.map((q) => q.name));
  for (const worker of workers) for (const queue of worker.queues) names.add(queue);
  return names;
}

/**
 * Resolves when `queue` is known (see the file comment) or `create` is set; otherwise rejects with
 * `SONIQ_UNKNOWN_QUEUE`, before anything is written.
 */
export async function assertKnownQueue(
  backend: GuardedBackend<unknown>,
  queue: string,
  declared: () => Iterable<string>,
  create: boolean,
  what: string,
): Promise<void> {
  if (create) return;
  for (const name of declared()) if (name === queue) return;
  const stored = await storedQueueNames(backend);
  if (stored.has(queue)) return;
  const near = [...stored].filter((n) => n.toLowerCase() === queue.toLowerCase()).slice(0, 1);
  throw new SoniqError(
    "SONIQ_UNKNOWN_QUEUE",
    `${what}: no queue named "${queue}" (no job, dead letter, worker or setting has it). ` +
      (near.length > 0 ? `Did you mean "${near[0]}"? ` : "") +
      "To set up a queue before its first job, pass { create: true } (CLI: --create).",
    { context: { queue } },
  );
}
