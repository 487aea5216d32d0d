/**
 * `soniq.scheduler()`: turns schedules into jobs. States: idle -> running (after `start()`) -> stopping
 * -> stopped. While running it checks every `checkIntervalMs`:
 *   1. take or renew the `soniq:scheduler` lease (TTL three check intervals): one scheduler, the leader,
 *      ticks; the others stand by and take over within four intervals of the leader's death, or at
 *      their next check when the leader stops (stop releases the lease);
 *   2. as leader, load every schedule (so pause, resume, remove and changes made by any process are
 *      seen at the next check), plan each one's due ticks (plan.ts) and record them oldest first: each
 *      ledger row commits with its job, so a tick gives one job whatever the number of schedulers.
 * `start()` first upserts this instance's `schedules.declare()` declarations (an unchanged schedule keeps its
 * next fire, so a restart never postpones an interval); one declared later is upserted at the next check. A failed check is logged and retried at the
 * next interval. Time comes from `clock` (a `manualClock()` in tests).
 */
import { randomUUID } from "node:crypto";
import type { Runtime } from "../app/runtime.js";
import { type Clock, type ClockTimer, isClock } from "../common/clock.js";
import { SoniqError } from "../common/errors.js";
import type { Schedule } from "../common/types.js";
import { planTicks } from "./plan.js";
import { recordPlanned, toStored } from "./runtime.js";

export interface SchedulerOptions {
  /** How often to check for due ticks (and to renew or contend for leadership). Default 5000. */
  checkIntervalMs?: number;
  /** Where time comes from. Default: the instance's `clock` (the system clock unless set). */
  clock?: Clock;
}

export interface CheckReport {
  /** This scheduler held the lease for the check. */
  leader: boolean;
  /** Ledger rows this check wrote, by outcome. */
  fired: number;
  skipped: number;
  missed: number;
  deduplicated: number;
}

/** The lease the leader holds. */
export const SCHEDULER_LEASE = "soniq:scheduler";
/** Ticks one schedule may record in one check (the rest wait for the next check). */
const TICKS_PER_CHECK = 500;

type State = "idle" | "running" | "stopping" | "stopped";

export function resolveSchedulerOptions(
  options: SchedulerOptions,
  defaultClock: Clock,
): Required<SchedulerOptions> {
  const problems: { field: string; problem: string }[] = [];
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", "Invalid scheduler options: expected an options object.", {
      context: { field: "options", problems: ["expected an options object"] },
    });
  }
  for (const key of Object.keys(options)) {
    if (key !== "checkIntervalMs" && key !== "clock") {
      problems.push({ field: key, problem: "is not a scheduler option (checkIntervalMs, clock)" });
    }
  }
  const ms = options.checkIntervalMs;
  if (ms !== undefined && (!Number.isSafeInteger(ms) || ms < 100 || ms > 3_600_000)) {
    problems.push({
      field: "checkIntervalMs",
      problem: `must be a whole number of milliseconds from 100 to 3600000 (got ${String(ms)})`,
    });
  }
  const clock = options.clock;
  if (clock !== undefined && !isClock(clock)) {
    problems.push({ field: "clock", problem: "must have now() and setTimer(callback, ms)" });
  }
  if (problems.length > 0) {
    const lines = problems.map((p) => `${p.field} ${p.problem}`);
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid scheduler options: ${lines.join("; ")}.`, {
      context: { field: problems[0]?.field, problems: lines },
    });
  }
  return { checkIntervalMs: ms ?? 5000, clock: clock ?? defaultClock };
}

export class Scheduler implements AsyncDisposable {
  /** The lease holder id. */
  readonly id = randomUUID();
  readonly checkIntervalMs: number;
  readonly #rt: Runtime;
  readonly #clock: Clock;
  readonly #onStopped: (s: Scheduler) => void;
  #state: State = "idle";
  #leader = false;
  #timer: ClockTimer | null = null;
  #checking: Promise<CheckReport> | null = null;
  #stopping: Promise<void> | null = null;
  /** Names of the declarations this scheduler has upserted. */
  readonly #persisted = new Set<string>();

  constructor(rt: Runtime, options: Required<SchedulerOptions>, onStopped: (s: Scheduler) => void) {
    this.#rt = rt;
    this.checkIntervalMs = options.checkIntervalMs;
    this.#clock = options.clock;
    this.#onStopped = onStopped;
  }

  /** True while this scheduler holds the lease (as of its last check). */
  get isLeader(): boolean {
    return this.#leader;
  }

  get state(): State {
    return this.#state;
  }

  /** Upserts the declarations, runs a first check, then checks every interval. */
  async start(): Promise<void> {
    if (this.#state !== "idle") {
      throw new SoniqError(
        "SONIQ_INVALID_STATE",
        `This scheduler is ${this.#state}; create a new one to start again.`,
      );
    }
    this.#state = "running";
    try {
      await this.#persistDeclarations();
    } catch (err) {
      this.#state = "stopped";
      this.#onStopped(this);
      throw err;
    }
    await this.#loop();
  }

  /** Stops checking, waits for a check in progress, and releases leadership. Memoised. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /**
   * One check now: contend for (or renew) leadership and, as leader, record every due tick. The running
   * loop calls it; tests and callers with their own loop may too.
   */
  check(): Promise<CheckReport> {
    this.#checking ??= this.#check().finally(() => {
      this.#checking = null;
    });
    return this.#checking;
  }

  async #stop(): Promise<void> {
    const wasRunning = this.#state === "running";
    this.#state = "stopping";
    this.#timer?.cancel();
    this.#timer = null;
    await this.#checking?.catch(() => undefined);
    try {
      if (wasRunning && this.#leader) await this.#rt.backend.leases.release(SCHEDULER_LEASE, this.id);
    } finally {
      this.#leader = false;
      this.#state = "stopped";
      this.#onStopped(this);
    }
  }

  async #loop(): Promise<void> {
    if (this.#state !== "running") return;
    try {
      await this.check();
    } catch (err) {
      this.#rt.logger.error(
        { err, schedulerId: this.id },
        "scheduler check failed; retrying at the next interval",
      );
    }
    if (this.#state === "running")
      this.#timer = this.#clock.setTimer(() => this.#loop(), this.checkIntervalMs);
  }

  /** Upserts this instance's declarations not yet stored by this scheduler (all of them at start). */
  async #persistDeclarations(): Promise<void> {
    const fresh = [...this.#rt.declarations.values()].filter((d) => !this.#persisted.has(d.name));
    if (fresh.length === 0) return;
    const now = new Date(this.#clock.now());
    await this.#rt.backend.schedules.upsert(fresh.map((d) => toStored(d, now)));
    for (const d of fresh) this.#persisted.add(d.name);
  }

  async #check(): Promise<CheckReport> {
    const report: CheckReport = { leader: false, fired: 0, skipped: 0, missed: 0, deduplicated: 0 };
    // A schedule declared after start() is stored at the next check.
    await this.#persistDeclarations();
    this.#leader = await this.#rt.backend.leases.tryAcquire(
      SCHEDULER_LEASE,
      this.id,
      3 * this.checkIntervalMs,
    );
    report.leader = this.#leader;
    if (!this.#leader) return report;
    const schedules = await this.#rt.backend.schedules.list();
    await this.#rt.webhooks.refresh();
    for (const schedule of schedules) {
      if (this.#state === "stopping") break;
      try {
        await this.#tickSchedule(schedule, report);
      } catch (err) {
        this.#rt.logger.error({ err, schedule: schedule.name }, "could not record a schedule's tick");
      }
    }
    return report;
  }

  async #tickSchedule(schedule: Schedule, report: CheckReport): Promise<void> {
    const now = new Date(this.#clock.now());
    const planned = planTicks(schedule, now, {
      lateAfterMs: 5 * this.checkIntervalMs,
      limit: TICKS_PER_CHECK,
    });
    for (const tick of planned) {
      const result = await recordPlanned(this.#rt, schedule, tick);
      if (result.status === "no_schedule") return;
      if (result.status === "recorded") report[result.tick.outcome]++;
      if (result.status === "recorded" && result.tick.jobId !== null && result.tick.outcome === "fired") {
        this.#rt.logger.info(
          { schedule: schedule.name, jobId: result.tick.jobId, tickAt: tick.tickAt.toISOString() },
          "recurring job enqueued",
        );
      }
    }
  }
}
