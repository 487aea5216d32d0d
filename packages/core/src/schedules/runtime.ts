/**
 * The two steps every tick takes, for the scheduler and `soniq.schedules` alike: building its job and
 * recording it (over the instance's one runtime bag, `app/runtime.ts`).
 */

import type { Runtime } from "../app/runtime.js";
import { isSoniqError, SoniqError } from "../common/errors.js";
import type { Schedule } from "../common/types.js";
import type {
  AuditRecord,
  NewJob,
  ScheduleDeclaration,
  TickRecord,
  TickRecordResult,
} from "../contract/index.js";
import { prepareJob, sendEvent, targetOf } from "../jobs/definition.js";
import { produce } from "../observability/tracing.js";
import type { DeclaredSchedule } from "./declare.js";
import { firstTick, type PlannedTick } from "./plan.js";

/** Records a tick; a fired job's write goes through the producer hooks. */
export function recordTick(rt: Runtime, tick: TickRecord, audit?: AuditRecord): Promise<TickRecordResult> {
  const { job } = tick;
  if (job === null) return rt.backend.schedules.recordTick(tick, audit);
  return produce(
    rt.producers,
    () => sendEvent("schedule", [job]),
    [job],
    () => rt.backend.schedules.recordTick(tick, audit),
  );
}

/** The row a declaration upserts, with its first tick counted from `now`. */
export function toStored(declaration: DeclaredSchedule, now: Date): ScheduleDeclaration {
  return { ...declaration, maxAttempts: null, nextRunAt: firstTick(declaration, now) };
}

/**
 * The job a fire enqueues, prepared as `enqueue` prepares one (the JSON check, the job's schema, defaults):
 * the schedule's queue and priority, else the job's options here, else the instance defaults. Throws the
 * `SoniqError` enqueue would (`SONIQ_TASK_ARGS_INVALID` when the args fail the job's schema).
 */
export function jobFor(rt: Runtime, schedule: FiredJob): NewJob | Promise<NewJob> {
  const options = {
    ...(schedule.queue === null ? {} : { queue: schedule.queue }),
    ...(schedule.priority === null ? {} : { priority: schedule.priority }),
  };
  return prepareJob(targetOf(schedule.jobName, rt.registry), schedule.args, options, rt.options, undefined, {
    maxAttempts: schedule.maxAttempts ?? null,
  });
}

/** What a schedule (stored or declared) says about the job it fires. */
type FiredJob = Pick<Schedule, "jobName" | "args" | "queue" | "priority"> & { maxAttempts?: number | null };

/**
 * `schedules.declare()`'s check of the job it fires, when that job is defined here: the fire's own preparation, run
 * once at declaration, so args that fail the job's schema are refused where they are written (the enqueue's
 * `SoniqError`, naming the schedule, `context.field` "args"). A job defined later or elsewhere, or a schema
 * that validates asynchronously, is checked at each fire instead (see `recordPlanned`).
 */
export function checkDeclaredJob(rt: Runtime, declaration: DeclaredSchedule): void {
  if (!rt.registry.has(declaration.jobName)) return;
  try {
    const prepared = jobFor(rt, declaration);
    if (prepared instanceof Promise) prepared.catch(() => {});
  } catch (err) {
    if (!isSoniqError(err)) throw err;
    throw new SoniqError(err.code, `Schedule "${declaration.name}": ${err.message}`, {
      context: { ...err.context, schedule: declaration.name, field: "args" },
      cause: err,
    });
  }
}

/**
 * The ledger reason of a fire whose job could not be prepared: `invalid_args` when the args fail the
 * job's schema (or are not JSON), `invalid_job` for any other refusal. The tick is recorded `skipped` with
 * it and the schedule moves on to its next tick, so a bad schedule never fires nor loops.
 */
export function refusalReason(err: SoniqError): string {
  return err.code === "SONIQ_TASK_ARGS_INVALID" ? "invalid_args" : "invalid_job";
}

/** Records one planned tick (with its job when it fires; `skipped` when that job is refused). */
export async function recordPlanned(
  rt: Runtime,
  schedule: Schedule,
  tick: PlannedTick,
): Promise<TickRecordResult> {
  let job: NewJob | null = null;
  let { outcome, reason } = tick;
  if (outcome === "fired") {
    try {
      job = await jobFor(rt, schedule);
    } catch (err) {
      if (!isSoniqError(err)) throw err;
      rt.logger.warn(
        { schedule: schedule.name, jobName: schedule.jobName, tickAt: tick.tickAt, code: err.code, err },
        `schedule "${schedule.name}" did not fire: ${err.message}`,
      );
      outcome = "skipped";
      reason = refusalReason(err);
    }
  }
  const deliveries =
    outcome === "missed"
      ? rt.webhooks.rows("schedule.missed", () => ({
          schedule: schedule.name,
          jobName: schedule.jobName,
          tickAt: tick.tickAt.toISOString(),
          reason,
        }))
      : [];
  const result = await recordTick(rt, {
    scheduleName: schedule.name,
    tickAt: tick.tickAt,
    outcome,
    reason,
    job,
    nextRunAt: tick.nextRunAt,
    manual: false,
    ...(deliveries.length > 0 ? { deliveries } : {}),
  });
  if (deliveries.length > 0 && result.status === "recorded") rt.webhooks.notify();
  return result;
}
