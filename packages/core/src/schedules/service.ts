/**
 * `soniq.schedules`: read and steer recurring jobs from any process, with or without a running
 * scheduler. Every call goes to storage, so what one process does, every scheduler sees at its next check.
 * Pause, resume, remove and trigger are operator actions: each writes one audit row, with its change.
 */

import type { Runtime } from "../app/runtime.js";
import { SoniqError } from "../common/errors.js";
import { assertJobName } from "../common/names.js";
import { optionsObject } from "../common/option-table.js";
import type { Schedule, ScheduleTick } from "../common/types.js";
import type { AuditRecord, NewJob, TickRecord, TickRecordResult } from "../contract/index.js";
import type { JobDefinition } from "../jobs/definition.js";
import { noArguments } from "../jobs/queries.js";
import { type ActorOptions, actorOf, audited, auditRecord } from "../observability/audit.js";
import { type DeclaredSchedule, declareSchedule, type ScheduleSpec } from "./declare.js";
import { triggeredJobId } from "./ledger.js";
import { planTicks, timingOf } from "./plan.js";
import { checkDeclaredJob, jobFor, recordPlanned, recordTick, toStored } from "./runtime.js";
import { upcomingTicks } from "./ticks.js";

/** How many ticks `resume()` records as skipped in one go (a long pause is finished by the scheduler). */
const RESUME_TICKS = 10_000;

const NO_SCHEDULE: TickRecordResult = { status: "no_schedule" };

export class ScheduleService {
  readonly #rt: Runtime;

  constructor(rt: Runtime) {
    this.#rt = rt;
  }

  /**
   * Declares a recurring job in code: `{ cron, timezone }` or `{ every }`, with `args`, `name` (default: the
   * job's name), `catchUp`, `queue`, `priority`. Checked now (`SONIQ_INVALID_OPTIONS` names the bad field;
   * `SONIQ_INVALID_ARGUMENT` for a name declared twice on this instance); stored when a scheduler starts.
   */
  declare<TArgs>(
    job: JobDefinition<TArgs, unknown, never> | string,
    spec: ScheduleSpec<TArgs>,
  ): DeclaredSchedule {
    const jobName = typeof job === "string" ? job : job?.name;
    assertJobName(jobName);
    const declaration = declareSchedule(jobName, spec as ScheduleSpec);
    if (this.#rt.declarations.has(declaration.name)) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `A schedule named "${declaration.name}" is already declared on this instance; give the second one a name.`,
        { context: { name: declaration.name } },
      );
    }
    checkDeclaredJob(this.#rt, declaration);
    this.#rt.declarations.set(declaration.name, declaration);
    return declaration;
  }

  /** Every persisted schedule, by name. Declarations are persisted when a scheduler starts. */
  async list(...args: []): Promise<Schedule[]> {
    noArguments(args, "schedules.list()", "takes no arguments (it lists every schedule)");
    return this.#rt.backend.schedules.list();
  }

  async get(name: string): Promise<Schedule | null> {
    checkName(name, "get");
    return this.#rt.backend.schedules.get(name);
  }

  /** Stops firing: every tick until `resume` is recorded `skipped`. False when there is no such schedule. */
  async pause(name: string, options?: ActorOptions): Promise<boolean> {
    checkName(name, "pause");
    const record = auditRecord("schedule.pause", actorOf(options, "schedules.pause(options)"), name, null);
    return audited(
      this.#rt.backend,
      record,
      (r) => this.#rt.backend.schedules.setPaused(name, true, r),
      Boolean,
    );
  }

  /**
   * Fires again from the next tick on. Ticks that fell due while paused are recorded `skipped` (reason
   * `paused`) first, so resuming never catches them up. False when there is no such schedule.
   */
  async resume(name: string, options?: ActorOptions): Promise<boolean> {
    checkName(name, "resume");
    const record = auditRecord("schedule.resume", actorOf(options, "schedules.resume(options)"), name, null);
    const stored = await this.#skipPausedTicks(name);
    return audited(
      this.#rt.backend,
      record,
      (r) => (stored ? this.#rt.backend.schedules.setPaused(name, false, r) : Promise.resolve(false)),
      Boolean,
    );
  }

  /** Records `skipped` each tick that fell due while paused. False when there is no such schedule. */
  async #skipPausedTicks(name: string): Promise<boolean> {
    const schedule = await this.#rt.backend.schedules.get(name);
    if (schedule === null) return false;
    if (!schedule.paused) return true;
    const now = new Date(this.#rt.options.clock.now());
    const due = planTicks(schedule, now, { lateAfterMs: 0, limit: RESUME_TICKS });
    for (const tick of due) {
      const result = await recordPlanned(this.#rt, schedule, tick);
      if (result.status === "no_schedule") return false;
    }
    return true;
  }

  /**
   * Deletes the schedule and its ledger. A schedule still declared in code comes back when a scheduler
   * next starts in a process that declares it. False when there was none.
   */
  async remove(name: string, options?: ActorOptions): Promise<boolean> {
    checkName(name, "remove");
    const record = auditRecord("schedule.remove", actorOf(options, "schedules.remove(options)"), name, null);
    return audited(this.#rt.backend, record, (r) => this.#rt.backend.schedules.remove(name, r), Boolean);
  }

  /**
   * Fires the schedule's job now, once (even while paused), recorded in the ledger with `tickAt` = now.
   * Works without a running scheduler; a schedule declared here but not yet persisted is persisted first.
   * Returns the job id.
   */
  async trigger(name: string, options?: ActorOptions): Promise<string> {
    checkName(name, "trigger");
    const actor = actorOf(options, "schedules.trigger(options)");
    const record = auditRecord("schedule.trigger", actor, name, null);
    const now = new Date(this.#rt.options.clock.now());
    const schedule = await this.#storedOrDeclared(name, now);
    // Prepared before anything is written: a job enqueue would refuse is refused here too, with its error.
    const job = schedule === null ? null : await jobFor(this.#rt, schedule);
    const result = await audited(
      this.#rt.backend,
      record,
      (r) =>
        schedule === null || job === null
          ? Promise.resolve(NO_SCHEDULE)
          : this.#fireNow(schedule, job, now, r),
      (tick) => triggeredJobId(tick) !== null,
      (tick) => (tick.status === "no_schedule" ? "not_found" : "failed"),
    );
    if (result.status === "no_schedule") throw noSchedule(name);
    const jobId = triggeredJobId(result);
    if (jobId === null) {
      throw new SoniqError(
        "SONIQ_INVALID_STATE",
        `Schedule "${name}" already recorded a ${result.tick.outcome} tick at this instant.`,
        { context: { name, tickAt: now.toISOString() } },
      );
    }
    return jobId;
  }

  /** The stored schedule; one declared here but not stored yet is stored first. Null when neither. */
  async #storedOrDeclared(name: string, now: Date): Promise<Schedule | null> {
    const stored = await this.#rt.backend.schedules.get(name);
    const declared = this.#rt.declarations.get(name);
    if (stored !== null || declared === undefined) return stored;
    await this.#rt.backend.schedules.upsert([toStored(declared, now)]);
    return this.#rt.backend.schedules.get(name);
  }

  /** A manual tick at `now`, its audit row written with it. */
  #fireNow(schedule: Schedule, job: NewJob, now: Date, audit: AuditRecord): Promise<TickRecordResult> {
    const tick: TickRecord = {
      scheduleName: schedule.name,
      tickAt: now,
      outcome: "fired",
      reason: "trigger",
      job,
      nextRunAt: null,
      manual: true,
    };
    return recordTick(this.#rt, tick, audit);
  }

  /** The next `count` fire times (default 5), DST-correct in the schedule's timezone. */
  async upcoming(name: string, count = 5): Promise<Date[]> {
    checkName(name, "upcoming");
    if (!Number.isSafeInteger(count) || count < 1 || count > 1000) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `schedules.upcoming(): count must be an integer from 1 to 1000 (got ${String(count)}).`,
        {
          context: { count },
        },
      );
    }
    const now = new Date(this.#rt.options.clock.now());
    const stored = await this.#rt.backend.schedules.get(name);
    const declared = this.#rt.declarations.get(name);
    const schedule = stored ?? (declared === undefined ? null : toStored(declared, now));
    if (schedule === null) throw noSchedule(name);
    const next = schedule.nextRunAt;
    if (next === null) return [];
    const timing = timingOf(schedule, next);
    if (next.getTime() > now.getTime()) return [next, ...upcomingTicks(timing, next, count - 1)];
    return upcomingTicks(timing, now, count);
  }

  /** The tick ledger, newest first (default 20 rows, at most 1000). */
  async history(name: string, options?: { limit?: number }): Promise<ScheduleTick[]> {
    checkName(name, "history");
    const { limit = 20 } = optionsObject(options, "schedules.history(options)", ["limit"]);
    if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
      throw new SoniqError(
        "SONIQ_INVALID_ARGUMENT",
        `schedules.history(): limit must be an integer from 1 to 1000 (got ${String(limit)}).`,
        { context: { limit } },
      );
    }
    return this.#rt.backend.schedules.history(name, { limit });
  }
}

/** A schedule name is a non-empty string; anything else is the caller's mistake, not "not found". */
function checkName(name: unknown, method: string): void {
  if (typeof name !== "string" || name.length === 0 || name.length > 200) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `schedules.${method}(name): the name must be a non-empty string of at most 200 characters (got ${typeof name === "string" ? `${name.length} characters` : typeof name}).`,
      { context: { field: "name", method } },
    );
  }
}

function noSchedule(name: string): SoniqError {
  return new SoniqError(
    "SONIQ_INVALID_ARGUMENT",
    `No schedule named "${name}": declare it with soniq.schedules.declare() (it is stored when a scheduler starts).`,
    { context: { name } },
  );
}
