/**
 * Recurring jobs over one shared backend and a manual clock: each `process()` is a Soniq instance of its
 * own (its declarations, its schedulers), as separate application processes would be. Schedule times
 * come from the manual clock; SQL backends keep their own clock for leases and row timestamps.
 */
import { type Backend, type Clock, type SchedulerOptions, Soniq } from "@soniq/core";
import { type ManualClock, manualClock } from "@soniq/testkit";
import type { BackendKind } from "./runtime-support.js";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export interface World {
  clock: ManualClock;
  backend: Backend<unknown>;
  process(): Process;
  /** Jobs of `jobName`, oldest first. */
  jobsOf(jobName: string): ReturnType<Soniq["jobs"]["list"]>;
  close(): Promise<void>;
}

export interface Process extends Soniq {
  /** A scheduler whose timers stop firing on `kill()`, as if its process died (its lease is not released). */
  mortalScheduler(options?: SchedulerOptions): { scheduler: ReturnType<Soniq["scheduler"]>; kill(): void };
}

/** A world on a fresh storage of `kind` (a new SQLite file, a new Postgres database), migrated. */
export async function world(
  make: () => BackendKind,
  start: Date | number = Date.UTC(2026, 0, 1),
): Promise<World> {
  const kind = make();
  await kind.setup();
  const clock = manualClock(start);
  const backend = kind.name === "memory" ? await memoryOn(clock) : kind.create();
  const process = (): Process => {
    const soniq = new Soniq({ backend, clock }) as Process;
    soniq.mortalScheduler = (options = {}) => {
      let dead = false;
      const mortal: Clock = {
        now: clock.now,
        setTimer: (callback, ms) => clock.setTimer(() => (dead ? undefined : callback()), ms),
      };
      return {
        scheduler: soniq.scheduler({ ...options, clock: mortal }),
        kill: () => {
          dead = true;
        },
      };
    };
    return soniq;
  };
  const admin = process();
  await admin.setup();
  return {
    clock,
    backend,
    process,
    jobsOf: async (jobName) => (await admin.jobs.list({ jobName, limit: 1000 })).reverse(),
    close: async () => {
      await admin.close();
      await kind.teardown();
    },
  };
}

/** The memory backend on the manual clock, so its leases expire on the test's time line. */
async function memoryOn(clock: ManualClock): Promise<Backend<unknown>> {
  const { memoryBackend } = await import("@soniq/backend-memory");
  return memoryBackend({ now: clock.now });
}

/** The ledger of `name`, oldest first, as [ISO tick, outcome, reason]. */
export async function ledger(p: Soniq, name: string): Promise<[string, string, string | null][]> {
  const rows = await p.schedules.history(name, { limit: 1000 });
  return rows.reverse().map((t) => [t.tickAt.toISOString(), t.outcome, t.reason]);
}
