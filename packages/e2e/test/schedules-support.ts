/**
 * A recurring-jobs "process" over a shared memory backend and a manual clock: its declarations, its
 * `schedules` service and its schedulers, wired the way a Soniq instance wires them.
 */
import { memoryBackend } from "@soniq/backend-memory";
import type { Backend } from "../../core/src/backend.js";
import { silentLogger } from "../../core/src/logger.js";
import type { ResolvedSoniqOptions } from "../../core/src/options.js";
import { type Clock, type ManualClock, manualClock } from "../../core/src/schedules/clock.js";
import {
  declarePeriodic,
  type PeriodicDeclaration,
  type PeriodicOptions,
} from "../../core/src/schedules/declare.js";
import { type ScheduleRuntime, schedulesFacetOf } from "../../core/src/schedules/runtime.js";
import {
  resolveSchedulerOptions,
  Scheduler,
  type SchedulerOptions,
} from "../../core/src/schedules/scheduler.js";
import { ScheduleService } from "../../core/src/schedules/service.js";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export interface World {
  clock: ManualClock;
  backend: Backend<never>;
  process(): Process;
}

export interface Process {
  periodic(jobName: string, options: PeriodicOptions): PeriodicDeclaration;
  schedules: ScheduleService;
  scheduler(options?: SchedulerOptions): Scheduler;
  /** A scheduler whose timers stop firing on `kill()`, as if its process died (its lease is not released). */
  mortalScheduler(options?: SchedulerOptions): { scheduler: Scheduler; kill(): void };
}

const OPTIONS = {
  defaultQueue: "default",
  defaultPriority: 100,
  defaultMaxAttempts: 3,
  producerId: null,
} as unknown as ResolvedSoniqOptions;

export function world(start: Date | number = Date.UTC(2026, 0, 1)): World {
  const clock = manualClock(start);
  const backend = memoryBackend({ now: clock.now });
  return {
    clock,
    backend,
    process: () => newProcess(clock, backend),
  };
}

function newProcess(clock: ManualClock, backend: Backend<never>): Process {
  const declarations = new Map<string, PeriodicDeclaration>();
  const rt: ScheduleRuntime = {
    facet: () => schedulesFacetOf(backend),
    leases: backend.leases,
    declarations,
    registry: new Map(),
    options: OPTIONS,
    logger: silentLogger,
    clock,
  };
  const make = (options: SchedulerOptions, c: Clock) =>
    new Scheduler(rt, resolveSchedulerOptions(options, c), () => undefined);
  return {
    periodic(jobName, options) {
      const d = declarePeriodic(jobName, options);
      declarations.set(d.name, d);
      return d;
    },
    schedules: new ScheduleService(rt),
    scheduler: (options = {}) => make(options, clock),
    mortalScheduler(options = {}) {
      let dead = false;
      const mortal: Clock = {
        now: clock.now,
        setTimer: (callback, ms) => clock.setTimer(() => (dead ? undefined : callback()), ms),
      };
      return {
        scheduler: make(options, mortal),
        kill: () => {
          dead = true;
        },
      };
    },
  };
}

/** The ledger of `name`, oldest first, as [ISO tick, outcome, reason]. */
export async function ledger(p: Process, name: string): Promise<[string, string, string | null][]> {
  const rows = await p.schedules.history(name, { limit: 1000 });
  return rows.reverse().map((t) => [t.tickAt.toISOString(), t.outcome, t.reason]);
}
