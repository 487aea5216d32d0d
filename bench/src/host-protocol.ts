/** Messages between the parent (workloads) and the worker host child process. */
import type { ProduceRequest } from "./producer.js";
import type { QueueLimit, SystemTarget, TaskKind } from "./systems/types.js";

export type HostCall =
  | { op: "open"; systemId: string; target: SystemTarget }
  /** Runs the system's `prepare` here (Node 24 rows: the harness's Node must not load the library). */
  | { op: "prepare"; systemId: string; target: SystemTarget }
  /** This process's CPU time so far (user + system, every thread), in seconds. */
  | { op: "cpu" }
  /**
   * Reset the start tracker: expect jobs 0..n-1 of `kind`; keep start times when `recordTimes`. `shared`:
   * other worker hosts run the same jobs (scale-out), so the report carries the count per index for the
   * parent to merge.
   */
  | { op: "track"; kind: TaskKind; n: number; recordTimes: boolean; shared: boolean }
  | { op: "createWorker"; concurrency: number }
  | { op: "startWorker" }
  | { op: "stopWorker" }
  | { op: "report" }
  | { op: "produce"; req: ProduceRequest }
  | { op: "counts"; kind: TaskKind }
  | { op: "settled"; kind: TaskKind }
  | { op: "limitQueue"; limit: QueueLimit }
  | { op: "stepCounts"; kind: TaskKind }
  /** The child's incidents since the last ask (see incidents.ts); "close" returns the rest. */
  | { op: "incidents" }
  | { op: "close" };

export interface HostRequest {
  id: number;
  call: HostCall;
}

export type HostMessage =
  | { type: "result"; id: number; ok: true; value: unknown }
  | { type: "result"; id: number; ok: false; error: string }
  /** Every expected job has had its handler started at least once. */
  | { type: "all-started"; at: number };

/** What the worker's handlers saw, checked against the expected jobs. */
export interface StartReport {
  expected: number;
  /** How many times each index should start (`runsPerJob` of the tracked kind: 1, or the retry attempts). */
  runsPerJob: number;
  /** Indexes started exactly `runsPerJob` times. */
  once: number;
  /** Starts beyond `runsPerJob` (an index started twice, for a kind that runs once). */
  duplicates: number;
  /** Expected indexes started fewer than `runsPerJob` times (never, for a kind that runs once). */
  missing: number;
  /** Starts of another kind or an index outside 0..n-1. */
  unexpected: number;
  firstStartAt: number | null;
  lastStartAt: number | null;
  /** Per index, the first start time (when recorded; 0 for an index never started). */
  startTimes: number[] | null;
  /** Per index, how many times it started (`shared` tracking only). */
  startCounts: number[] | null;
  /** W9 and W9s (`steps` and `sleep` jobs): what the durable-step handlers reported; absent otherwise. */
  steps?: StepReport | null;
}

/** What W9's and W9s's handlers reported beyond their starts (`runSteps`, `runSleep` in systems/types.ts). */
export interface StepReport {
  /** W9: step functions that ran (a step answered from its checkpoint runs none). */
  stepRuns: number;
  /** W9: (job, step) pairs whose function ran other than exactly once (never, or more than once). */
  stepsNotOnce: number;
  /** W9s: handler runs from the top (one before a job's sleep, and one more where the system replays after it). */
  runs: number;
  /** W9s: the first handler run of any job (the clock's reading). */
  firstRunAt: number | null;
  /** W9s: over the jobs, the shortest time from a job's first run to the end of its sleep (its start report), ms. */
  minSleptMs: number | null;
  /** W9s: the most handler runs in progress at once (a sleep that holds its slot counts as running). */
  maxRunning: number;
  /** W9s: from the first job's first run to the last job's first run, ms (how long the jobs took to begin). */
  firstRunsSpanMs: number | null;
  /** W9s: the median time from a job's first run to the end of its sleep, ms. */
  medianSleptMs: number | null;
}
