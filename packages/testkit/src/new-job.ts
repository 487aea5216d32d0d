/** Helpers third parties use in their own backend tests: complete jobs and names no other test uses. */
import { randomBytes } from "node:crypto";
import { type NewJob, newJobId } from "@soniq/core/backend";

/**
 * A complete `NewJob` as core would send it (fresh id, queue `"default"`, priority 100, 3 attempts, due
 * now, no dedup, unversioned args), with `overrides` applied. The id is core's own (`newJobId`: a UUIDv7,
 * later than every id this process made before), so jobs made in turn list newest first by id, as core's
 * jobs do.
 */
export function newJob(overrides: Partial<NewJob> = {}): NewJob {
  return {
    id: newJobId(),
    jobName: "conformance.job",
    args: { n: 1 },
    argsHash: null,
    queue: "default",
    priority: 100,
    maxAttempts: 3,
    scheduledAt: null,
    dedupKey: null,
    unique: false,
    producerId: null,
    group: null,
    flowId: null,
    stepRef: null,
    argsVersion: null,
    traceId: null,
    traceContext: null,
    ...overrides,
  };
}

/** A queue name no other test uses (`<prefix>_<8 hex>`), so tests can share one database. */
export function uniqueQueue(prefix = "q"): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}
