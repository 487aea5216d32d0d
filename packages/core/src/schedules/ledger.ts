/**
 * Recording a tick, written once: the program every backend's `schedules.recordTick` runs over its own small
 * `TickStore`, inside its own transaction (the flow engine's shape, common/program.ts). The store locks and
 * reads the schedule's ledger head and the tick's row, enqueues a job and writes what the program decided; the
 * program decides everything else:
 * - no schedule: nothing is written (`no_schedule`);
 * - the tick's row exists (another scheduler recorded it): nothing changes (`duplicate`); a manual trigger's
 *   audit row is still written when that row names a job;
 * - a `fired` tick of a schedule paused now (not a manual trigger) is recorded `skipped`, reason `paused`, with
 *   no job; a fired job whose enqueue deduplicated is recorded `deduplicated` with the existing job's id;
 * - the schedule's `nextRunAt` moves to the tick's `nextRunAt`, never backwards; a tick that made a job sets
 *   `lastRunAt` (the tick), `lastJobId` and counts one more run;
 * - the effects ride on the write: the tick's webhook deliveries when this call recorded the row, and a manual
 *   trigger's audit row (with the job's id) when the tick names a job.
 */

import { type AsyncStore, type Program, runAsync, runSync, storeCall } from "../common/program.js";
import type { ScheduleTick } from "../common/types.js";
import type {
  AuditRecord,
  EnqueueResult,
  NewJob,
  NewWebhookDelivery,
  TickRecord,
  TickRecordResult,
} from "../contract/index.js";

/** The schedule row's fields a tick reads and moves. */
export interface LedgerHead {
  paused: boolean;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  lastJobId: string | null;
  /** Ticks that made a job, ever. */
  runCount: number;
}

/** What the store reads under the schedule's lock: its head, and the tick's ledger row if there is one. */
export interface LedgerRead {
  schedule: LedgerHead;
  tick: ScheduleTick | null;
}

/** The program's decision for a new tick: the ledger row to insert and the schedule's fields after it. */
export interface TickWrite {
  scheduleName: string;
  /** The row to insert (the store sets `recordedAt`). */
  tick: Omit<ScheduleTick, "recordedAt">;
  /** The schedule's fields to write, as they are after this tick. */
  schedule: Omit<LedgerHead, "paused">;
}

/** What rides on a tick's write, in the same transaction. */
export interface TickEffects {
  audit: AuditRecord | null;
  deliveries: readonly NewWebhookDelivery[];
}

/** The storage a tick program runs over, inside one transaction of the backend's. */
export interface TickStore {
  /**
   * Locks the schedule's row for the rest of the transaction (concurrent recorders of one schedule take turns)
   * and reads it with the ledger row at (`name`, `tickAt`). Null when there is no such schedule.
   */
  read(name: string, tickAt: Date): LedgerRead | null;
  /** The job insert of `jobs.enqueue` (dedup included), inside this transaction. */
  enqueue(job: NewJob): EnqueueResult;
  /** Inserts the ledger row and writes the schedule's fields; returns the row as stored. */
  record(write: TickWrite): ScheduleTick;
  /** Writes the audit row (when not null) and the deliveries. */
  effects(effects: TickEffects): void;
}

/** The same store with every method asynchronous (Postgres). */
export type AsyncTickStore = AsyncStore<TickStore>;

type TickProgram<T> = Program<TickStore, T>;

function call<K extends keyof TickStore>(op: K, ...args: Parameters<TickStore[K]>) {
  return storeCall<TickStore, K>(op, ...(args as never));
}

/** Records `tick` over a synchronous store (inside the caller's synchronous transaction). */
export function recordTickSync(store: TickStore, tick: TickRecord, audit?: AuditRecord): TickRecordResult {
  return runSync(recordTick(tick, audit), store);
}

/** Records `tick` over an asynchronous store (inside the caller's transaction). */
export function recordTickAsync(
  store: AsyncTickStore,
  tick: TickRecord,
  audit?: AuditRecord,
): Promise<TickRecordResult> {
  return runAsync(recordTick(tick, audit), store);
}

function* recordTick(tick: TickRecord, audit: AuditRecord | undefined): TickProgram<TickRecordResult> {
  const read = yield* call("read", tick.scheduleName, tick.tickAt);
  if (read === null) return { status: "no_schedule" };
  if (read.tick !== null) {
    const trigger = triggerAudit(audit, read.tick.jobId);
    if (trigger !== null) yield* call("effects", { audit: trigger, deliveries: [] });
    return { status: "duplicate", tick: read.tick };
  }
  const planned = resolveTick(tick, read.schedule.paused);
  let outcome: ScheduleTick["outcome"] = planned.outcome;
  let jobId: string | null = null;
  if (planned.job !== null) {
    const enqueued = yield* call("enqueue", planned.job);
    jobId = enqueued.id;
    if (enqueued.deduplicated) outcome = "deduplicated";
  }
  const recorded = yield* call("record", {
    scheduleName: tick.scheduleName,
    tick: { tickAt: tick.tickAt, outcome, jobId, reason: planned.reason },
    schedule: advance(read.schedule, tick, jobId),
  });
  const effects: TickEffects = { audit: triggerAudit(audit, jobId), deliveries: tick.deliveries ?? [] };
  if (effects.audit !== null || effects.deliveries.length > 0) {
    yield* call("effects", effects);
  }
  return { status: "recorded", tick: recorded };
}

/**
 * What is written for a tick once the schedule's pause is known (under its lock): a `fired` tick of a paused
 * schedule (not a manual trigger) is `skipped` with reason `paused` and makes no job; `job` is what to enqueue.
 */
function resolveTick(
  tick: TickRecord,
  paused: boolean,
): { outcome: TickRecord["outcome"]; reason: string | null; job: NewJob | null } {
  if (tick.outcome !== "fired") return { outcome: tick.outcome, reason: tick.reason, job: null };
  if (paused && !tick.manual) return { outcome: "skipped", reason: "paused", job: null };
  return { outcome: "fired", reason: tick.reason, job: tick.job };
}

/** The schedule's fields after a tick: next fire forward only; a tick that made a job is its last run. */
function advance(head: LedgerHead, tick: TickRecord, jobId: string | null): TickWrite["schedule"] {
  const forward =
    tick.nextRunAt !== null &&
    (head.nextRunAt === null || tick.nextRunAt.getTime() > head.nextRunAt.getTime());
  const nextRunAt = forward ? tick.nextRunAt : head.nextRunAt;
  if (jobId === null) {
    return { nextRunAt, lastRunAt: head.lastRunAt, lastJobId: head.lastJobId, runCount: head.runCount };
  }
  return { nextRunAt, lastRunAt: tick.tickAt, lastJobId: jobId, runCount: head.runCount + 1 };
}

/** A manual trigger's audit row: `audit` with the job's id in its details; null when there is no job to name. */
function triggerAudit(audit: AuditRecord | undefined, jobId: string | null): AuditRecord | null {
  if (audit === undefined || jobId === null) return null;
  return { ...audit, details: { ...audit.details, jobId } };
}

/** The job a manual trigger answers with: the returned tick's job (recorded or duplicate), else null. */
export function triggeredJobId(result: TickRecordResult): string | null {
  return result.status === "no_schedule" ? null : result.tick.jobId;
}
