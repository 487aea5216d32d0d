/**
 * What the scheduler and `soniq.schedules` share: the instance's declarations, registry and options, the
 * backend's schedules facet, and the two steps every tick takes (building its job, recording it).
 */

import type { Clock } from "../clock.js";
import type {
  AuditFacet,
  LeasesFacet,
  NewJob,
  ScheduleDeclaration,
  SchedulesFacet,
  TickRecordResult,
} from "../contract/index.js";
import { newJobId } from "../ids.js";
import type { RegisteredJob } from "../jobs.js";
import { argsHash } from "../json.js";
import type { Logger } from "../logger.js";
import type { ResolvedSoniqOptions } from "../options.js";
import type { Schedule } from "../types.js";
import type { PeriodicDeclaration } from "./declare.js";
import { firstTick, type PlannedTick } from "./plan.js";

export interface ScheduleRuntime {
  readonly schedules: SchedulesFacet;
  readonly leases: LeasesFacet;
  /** Where `soniq.schedules`' operator actions write the row of an action that found nothing to change. */
  readonly audit: AuditFacet;
  readonly declarations: ReadonlyMap<string, PeriodicDeclaration>;
  readonly registry: ReadonlyMap<string, RegisteredJob>;
  readonly options: ResolvedSoniqOptions;
  readonly logger: Logger;
  /** The clock `soniq.schedules` uses (trigger's tick, resume, upcoming). */
  readonly clock: Clock;
}

/** The row a declaration upserts, with its first tick counted from `now`. */
export function toStored(declaration: PeriodicDeclaration, now: Date): ScheduleDeclaration {
  return { ...declaration, maxAttempts: null, nextRunAt: firstTick(declaration, now) };
}

/** The job a fire enqueues: the schedule's overrides, else the job's options here, else the instance defaults. */
export function jobFor(rt: ScheduleRuntime, schedule: Schedule): NewJob {
  const defined = rt.registry.get(schedule.jobName)?.options;
  const unique = defined?.unique ?? false;
  return {
    id: newJobId(),
    jobName: schedule.jobName,
    args: schedule.args,
    argsHash: unique ? argsHash(schedule.args) : null,
    queue: schedule.queue ?? defined?.queue ?? rt.options.defaultQueue,
    priority: schedule.priority ?? defined?.priority ?? rt.options.defaultPriority,
    maxAttempts: schedule.maxAttempts ?? defined?.maxAttempts ?? rt.options.defaultMaxAttempts,
    scheduledAt: null,
    dedupKey: null,
    unique,
    producerId: rt.options.producerId,
    group: null,
  };
}

/** Records one planned tick (with its job when it fires). */
export function recordPlanned(
  rt: ScheduleRuntime,
  schedule: Schedule,
  tick: PlannedTick,
): Promise<TickRecordResult> {
  return rt.schedules.recordTick({
    scheduleName: schedule.name,
    tickAt: tick.tickAt,
    outcome: tick.outcome,
    reason: tick.reason,
    job: tick.outcome === "fired" ? jobFor(rt, schedule) : null,
    nextRunAt: tick.nextRunAt,
    manual: false,
  });
}
