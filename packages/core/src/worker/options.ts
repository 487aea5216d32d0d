/**
 * `soniq.worker(options)`: the worker's options table (see options.ts for how a table declares each option
 * once: its check, its default and its README line), validated once into a frozen `ResolvedWorkerOptions`.
 */

import {
  checkBool,
  checkQueue,
  fail,
  type Given,
  intIn,
  MAX_TIMER_MS,
  option,
  optionProblems,
  type Resolved,
  resolveOptions,
} from "../common/option-table.js";
import { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_STALE_AFTER_MS } from "./liveness.js";

const timerMs = intIn(0, MAX_TIMER_MS);

export const WORKER_OPTIONS = {
  queues: option<readonly string[], readonly string[] | null>()({
    check: (problems, v) => {
      if (v === undefined) return;
      if (!Array.isArray(v) || v.length === 0) {
        problems.push("queues must be a non-empty array of queue names (omit it for every queue)");
      } else {
        for (const [i, q] of v.entries()) checkQueue(problems, q, `queues[${i}]`);
      }
    },
    normalise: (v) => Object.freeze([...new Set(v as string[])]),
    default: () => null,
    defaultDoc: "every queue",
    doc: "queues to take jobs from (a non-empty list)",
  }),
  concurrency: option<number>()({
    check: intIn(1, 10_000),
    default: () => 10,
    defaultDoc: "`10`",
    doc: "handlers running at once",
  }),
  batchSize: option<number>()({
    check: intIn(1, 10_000),
    default: (r) => r.concurrency as number,
    defaultDoc: "`concurrency`",
    doc: "claimed-but-not-started jobs kept locally",
  }),
  maxBatchSize: option<number>()({
    check: intIn(1, 10_000),
    default: (r) => Math.max(r.batchSize as number, 500),
    defaultDoc: "`max(batchSize, 500)`",
    doc: "upper bound of the adaptive claim window (see below); `batchSize` fixes the window",
  }),
  completeBatchSize: option<number>()({
    check: intIn(1, 10_000),
    default: () => 500,
    defaultDoc: "`500`",
    doc: "outcomes (completions, retries, dead letters...) per backend write at most",
  }),
  pollIntervalMs: option<number>()({
    check: intIn(1, MAX_TIMER_MS),
    default: () => 1000,
    defaultDoc: "`1000`",
    doc: "idle polling period (±20 % jitter); wake-ups from the backend come sooner",
  }),
  newerVersionDelayMs: option<number>()({
    check: intIn(1, MAX_TIMER_MS),
    default: () => 30_000,
    defaultDoc: "`30000` (30 s)",
    doc: "a job whose args are newer than this worker's handler is given back (no attempt spent), due again after this",
  }),
  heartbeatIntervalMs: option<number>()({
    check: intIn(1, MAX_TIMER_MS),
    default: () => DEFAULT_HEARTBEAT_INTERVAL_MS,
    defaultDoc: "`5000`",
    doc: "must be below `staleAfterMs`",
  }),
  staleAfterMs: option<number>()({
    check: intIn(1, Number.MAX_SAFE_INTEGER),
    default: () => DEFAULT_STALE_AFTER_MS,
    defaultDoc: "`60000` (1 min)",
    doc: "peers whose heartbeat is older are stale; their running jobs are requeued",
  }),
  maintenanceIntervalMs: option<number>()({
    check: intIn(1, MAX_TIMER_MS),
    default: () => 60_000,
    defaultDoc: "`60000`",
    doc: "how often stale recovery and expired-row cleanup run (see below)",
  }),
  shutdownTimeoutMs: option<number>()({
    check: timerMs,
    default: () => 30_000,
    defaultDoc: "`30000`",
    doc: "how long `stop()` waits for running handlers",
  }),
  metadata: option<Record<string, unknown> | null>()({
    check: (problems, v) => {
      if (v !== undefined && v !== null && typeof v !== "object")
        problems.push("metadata must be an object or null");
    },
    default: () => null,
    defaultDoc: "`null`",
    doc: "stored on the worker row",
  }),
  deliverWebhooks: option<boolean>()({
    check: checkBool,
    default: () => true,
    defaultDoc: "`true`",
    doc: "send due webhook deliveries (and watch queue backlogs under the maintenance lease)",
  }),
};

/** `soniq.worker(options)`. */
export type WorkerOptions = Given<typeof WORKER_OPTIONS>;
export type ResolvedWorkerOptions = Resolved<typeof WORKER_OPTIONS>;

export function resolveWorkerOptions(options: WorkerOptions | undefined): ResolvedWorkerOptions {
  const o = options === undefined ? {} : options;
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    fail("worker options", ["pass an options object (or nothing)"]);
  }
  const problems = optionProblems(WORKER_OPTIONS, o, "worker()");
  const heartbeat = o.heartbeatIntervalMs ?? WORKER_OPTIONS.heartbeatIntervalMs.default?.({}, undefined);
  const stale = o.staleAfterMs ?? WORKER_OPTIONS.staleAfterMs.default?.({}, undefined);
  if (typeof heartbeat === "number" && typeof stale === "number" && heartbeat >= stale) {
    problems.push(`heartbeatIntervalMs (${heartbeat}) must be below staleAfterMs (${stale})`);
  }
  if (problems.length > 0) fail("worker options", problems);
  const r = resolveOptions(WORKER_OPTIONS, o, undefined) as ResolvedWorkerOptions;
  if (r.maxBatchSize < r.batchSize) {
    fail("worker options", [`maxBatchSize (${r.maxBatchSize}) must be >= batchSize (${r.batchSize})`]);
  }
  return Object.freeze(r);
}
