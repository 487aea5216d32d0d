/** replayDeadLetterJob: mint a fresh queued job from a dead-letter row; the row stays and counts it. */
import type { ReplayOptions } from "@soniq/core";
import { invalidArgument, optionalTime, requireString } from "./errors.js";
import type { MemoryStore } from "./store.js";

export function replayDeadLetterJob(store: MemoryStore, id: string, options: ReplayOptions): string | null {
  const newId = requireString(options?.newId, "newId");
  if (options.queue !== undefined) requireString(options.queue, "queue");
  if (options.priority !== undefined && !Number.isSafeInteger(options.priority)) {
    throw invalidArgument("priority must be an integer.", { priority: options.priority });
  }
  const scheduledAt = optionalTime(options.scheduledAt, "scheduledAt");
  const row = store.deadLetters.get(id);
  if (row === undefined) return null;
  if (store.jobs.has(newId)) throw invalidArgument(`A job with id ${newId} already exists.`, { newId });
  const now = store.now();
  const queue = options.queue ?? row.queue;
  store.insertJob(
    {
      id: newId,
      jobName: row.jobName,
      argsJson: row.argsJson,
      argsHash: null,
      status: "queued",
      attempts: 0,
      maxAttempts: row.maxAttempts,
      queue,
      priority: options.priority ?? row.priority,
      uniqueJob: false,
      dedupKey: null,
      scheduledAt: scheduledAt ?? now,
      expiresAt: null,
      lastError: null,
      resultJson: null,
      producerId: null,
      workerId: null,
      createdAt: now,
      updatedAt: now,
      seq: store.nextSeq(),
      queuedVersion: 0,
      live: true,
    },
    now,
  );
  row.resurrectionCount++;
  row.lastResurrectionAt = now;
  store.wake(queue);
  return newId;
}
