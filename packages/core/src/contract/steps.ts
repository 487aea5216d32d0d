/**
 * The `steps` facet (capability `steps`, DESIGN.md section 19): a job's checkpoints (`soniq_job_steps`) and its
 * signal mailbox (`soniq_job_signals`). Core decides names (occurrence suffixes), limits, JSON checks and what a
 * handler sees; a backend stores, fences and suspends, each call in one transaction.
 *
 * Every write made for a run is fenced like a settle: it applies only while the job's row is `processing` with
 * the attempt the claim gave it and, when `workerId` is set, that worker's claim. A fenced write that finds the
 * fence broken changes nothing and answers `applied: false` / `{ state: "lost" }` (core throws
 * `SONIQ_LEASE_LOST`). The fence holds until the write commits (Postgres: the job's row is read `FOR SHARE` by
 * the checkpoint's statement; SQLite and memory: one transaction / one synchronous step).
 */

import type { JobStep, StepKind } from "../common/types.js";
import type { AuditRecord } from "./audit.js";
import type { DoneSettlement } from "./runs.js";

/** The run a step write belongs to. */
export interface StepRef {
  id: string;
  /** The job's `attempts` as the claim returned it. */
  attempt: number;
  /** The claiming worker (core always passes one). */
  workerId: string | null;
}

/** A `step` checkpoint: the value a step returned (`done`) or its last error (`failed`). */
export interface StepWrite {
  /** The occurrence name (`charge`, `charge#2`). */
  name: string;
  state: "done" | "failed";
  /** Already checked by core (JSON, within `maxStepValueBytes`); null for `failed`. */
  value: unknown;
  /** The formatted error of a failed step; null for `done`. */
  error: string | null;
  /** When the step's function started (core's clock). */
  startedAt: Date;
}

/**
 * A sleep or a signal wait. The backend keeps the first wake time it stored for the name (a later attempt never
 * stretches a sleep or a deadline).
 */
export type WaitRequest =
  | {
      kind: "sleep";
      name: string;
      /** `sleepUntil`'s instant; null: `delayMs` from the backend's now. */
      wakeAt: Date | null;
      delayMs: number;
    }
  | {
      kind: "signal";
      /** The occurrence name of the wait (`approval`, `approval#2`). */
      name: string;
      /** The signal name it consumes (the name without its occurrence suffix). */
      signal: string;
      timeoutMs: number;
    };

/**
 * - `done`: the sleep is over, or a signal was consumed (`value` its payload), both recorded `done`.
 * - `timed_out`: the signal wait's deadline passed without one (recorded `timed_out`).
 * - `waiting` with `suspended: false`: the wake time is less than `inProcessMs` away and nothing was released:
 *   the run waits `remainingMs` in process and asks again.
 * - `waiting` with `suspended: true`: the job went back to `queued`, due at `wakeAt`, its attempt given back
 *   (`attempts - 1`), its worker cleared; the run must end without a settlement.
 * - `lost`: the fence failed; nothing was written.
 */
export type WaitResult =
  | { state: "done"; value: unknown }
  | { state: "timed_out" }
  | { state: "waiting"; wakeAt: Date; remainingMs: number; suspended: boolean }
  | { state: "lost" };

export interface SignalRequest {
  jobId: string;
  name: string;
  /** Already checked by core (JSON, at most 64 KiB). */
  payload: unknown;
  /** A resend with the same key (per job) is a no-op; null: every send is stored. */
  key: string | null;
  /** A fresh UUID chosen by core. */
  id: string;
}

/**
 * - `stored`: a new signal row (`woke`: the job waited on that name and was made due now).
 * - `duplicate`: a signal with this key exists; nothing changed.
 * - `not_found`: no job and no dead letter has the id.
 * - `finished`: the job is `done` or `cancelled`; nothing stored.
 */
export type SignalResult =
  | { outcome: "stored"; woke: boolean; deadLetter: boolean }
  | { outcome: "duplicate" }
  | { outcome: "not_found" }
  | { outcome: "finished"; status: "done" | "cancelled" };

/** Where a replay's checkpoints come from (`ReplayRequest.steps`). */
export interface ReplaySteps {
  /** Move the dead letter's `done` checkpoints to the new job (`"keep"`); false starts clean. */
  keep: boolean;
  /** Checkpoints recorded `done` on the new job with these values (checked JSON), replacing a kept one. */
  resolve: readonly { name: string; value: unknown }[];
}

export interface StepsFacet<TTx = never> {
  /** A job's (or a dead letter's) checkpoints, in the order they were first written. */
  list(jobId: string): Promise<JobStep[]>;
  /** Write (insert or replace) one `step` checkpoint, fenced. */
  save(ref: StepRef, write: StepWrite): Promise<boolean>;
  /**
   * Runs `fn` inside a transaction of the backend's own connection (Postgres: a pool client inside BEGIN;
   * SQLite: BEGIN IMMEDIATE, `fn` must be synchronous, a promise is refused with `SONIQ_INVALID_ARGUMENT` and
   * rolled back; memory: `fn` gets no handle and its result is applied after it returns), then writes
   * `write(value)` fenced in the same transaction. A broken fence rolls everything back (`applied: false`);
   * a throwing `fn` rolls back and rethrows.
   */
  saveInTransaction<T>(
    ref: StepRef,
    fn: (tx: TTx) => T | Promise<T>,
    write: (value: T) => StepWrite,
  ): Promise<{ applied: boolean; value: T }>;
  /**
   * As `saveInTransaction`, but the fenced write is the job's completion: `done(value)` is applied as
   * `runs.settle` applies a done item (its result, flow settlement and webhook deliveries), in the same
   * transaction as `fn`'s writes.
   */
  completeInTransaction<T>(
    ref: StepRef,
    fn: (tx: TTx) => T | Promise<T>,
    done: (value: T) => DoneSettlement,
  ): Promise<{ applied: boolean; value: T }>;
  /**
   * A sleep or a signal wait, in one transaction (see `WaitResult`): reads the wait's checkpoint; for a signal
   * wait consumes the oldest unconsumed signal of that name (`consumed_at`, `consumed_by` = the wait's name) and
   * records it `done`; else records `waiting` with its wake time (kept if already stored), `done` / `timed_out`
   * once it passed, and suspends the job when the wake time is `inProcessMs` or more away.
   */
  wait(ref: StepRef, request: WaitRequest, inProcessMs: number): Promise<WaitResult>;
  /**
   * Stores a signal (see `SignalResult`) and, when the job is `queued` with a `waiting` signal checkpoint of
   * that name, makes it due now and wakes a worker, in one transaction with `audit` (written when stored).
   */
  signal(request: SignalRequest, audit?: AuditRecord): Promise<SignalResult>;
}

export type { JobStep, StepKind };
