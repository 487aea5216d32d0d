/**
 * What a worker checks and does once when it starts: its registration row, its task names and its wake-up
 * subscription.
 */
import { hostname } from "node:os";
import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import { optionsObject } from "../common/option-table.js";
import { SONIQ_VERSION } from "../common/version.js";
import type { WorkerRegistration } from "../contract/index.js";
import type { ResolvedWorkerOptions } from "./options.js";

/** The worker row a worker registers (again after being declared stale). */
export function workerRegistration(id: string, options: ResolvedWorkerOptions): WorkerRegistration {
  return {
    id,
    hostname: hostname(),
    pid: process.pid,
    queues: options.queues ?? [],
    concurrency: options.concurrency,
    version: SONIQ_VERSION,
    metadata: options.metadata,
  };
}

/**
 * Records the job names a worker serves (the task registry): operators' tools read it to tell whether a
 * replayed job has a worker. Never rejects; a failure is logged.
 */
export function recordTaskNames(rt: Runtime, workerId: string): Promise<void> {
  const tasks = [...rt.registry.values()].map((def) => ({ name: def.name, version: def.options.version }));
  return rt.backend.workers.registerTaskNames(workerId, tasks).catch((err: unknown) => {
    rt.logger.warn({ err, workerId }, "could not record task names (observability only)");
  });
}

/**
 * Subscribes `nudge` to wake-ups for the worker's queues. Returns the unsubscribe function, or null when
 * the backend could not subscribe (the worker then polls only).
 */
export async function subscribeWakeUps(
  rt: Runtime,
  workerId: string,
  queues: readonly string[] | null,
  nudge: () => void,
): Promise<(() => Promise<void>) | null> {
  try {
    return await rt.backend.wakeUps.subscribe((queue) => {
      if (queues === null || queues.includes(queue)) nudge();
    });
  } catch (err) {
    rt.logger.warn({ err, workerId }, "could not subscribe to wake-ups; polling only");
    return null;
  }
}

/**
 * The round trips a starting worker makes beside its registration: the wake-up subscription and the webhook
 * endpoint list (read first so the first jobs' events find their endpoints). They do not depend on the
 * registration, so they run while it does (on a 2,000-job drain the first job started 18-21 ms after `start()`
 * instead of 22-24 ms with the three one after another). The worker's first claim waits for the registration
 * and the endpoint list only: the subscription may take longer (Postgres's `listen: "auto"` proves a NOTIFY
 * arrives, which through a transaction-mode pooler means waiting out its 3 s probe), and wake-ups are hints.
 * Once it is made, the worker is nudged: a job enqueued between its first claim and the LISTEN is claimed
 * then, not a poll interval later. A nudge that arrives before the worker runs is dropped; its first claim
 * follows anyway. `undo` (the registration failed) and `unsubscribe` (stop) wait for the subscription and
 * drop it.
 */
export function besideRegistration(
  rt: Runtime,
  workerId: string,
  queues: readonly string[] | null,
  nudge: () => void,
): {
  undo(): Promise<void>;
  /** The endpoint list is read: the error of that read, if any. */
  endpointsRead: Promise<{ err: unknown } | null>;
  unsubscribe(): Promise<void>;
} {
  let dropped = false;
  const subscribed = subscribeWakeUps(rt, workerId, queues, () => {
    if (!dropped) nudge();
  }).then((unsubscribe) => {
    if (unsubscribe && !dropped) nudge();
    return unsubscribe;
  });
  const endpointsRead = rt.webhooks.refresh().then(
    () => null,
    (err: unknown) => ({ err }),
  );
  const unsubscribe = async () => {
    dropped = true;
    const drop = await subscribed;
    await drop?.().catch((err: unknown) => rt.logger.warn({ err, workerId }, "unsubscribe failed"));
  };
  return {
    endpointsRead,
    unsubscribe,
    async undo() {
      await endpointsRead;
      await unsubscribe();
    },
  };
}

/** `runOnce`'s `maxJobs`, checked: an integer >= 0, or no limit (Infinity) when not given. */
export function maxJobsOf(options: { maxJobs?: number }): number {
  const { maxJobs: max = Number.POSITIVE_INFINITY } = optionsObject(options, "runOnce(options)", ["maxJobs"]);
  if (typeof max !== "number" || !(max >= 0) || (Number.isFinite(max) && !Number.isSafeInteger(max))) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", `maxJobs must be an integer >= 0 (got ${String(max)}).`);
  }
  return max;
}
