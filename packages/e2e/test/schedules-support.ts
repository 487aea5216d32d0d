/**
 * Recurring jobs over one shared memory backend and a manual clock: each `process()` is a Soniq
 * instance of its own (its declarations, its schedulers), as separate application processes would be.
 */
import { memoryBackend } from "@soniq/backend-memory";
import { type Clock, type ManualClock, manualClock, Soniq, type SchedulerOptions } from "@soniq/core";
import type { Backend } from "@soniq/core/backend";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export interface World {
  clock: ManualClock;
  backend: Backend<never>;
  process(): Process;
}

export interface Process extends Soniq {
  /** A scheduler whose timers stop firing on `kill()`, as if its process died (its lease is not released). */
  mortalScheduler(options?: SchedulerOptions): { scheduler: ReturnType<Soniq["scheduler"]>; kill(): void };
}

export function world(start: Date | number = Date.UTC(2026, 0, 1)): World {
  const clock = manualClock(start);
  const backend = memoryBackend({ now: clock.now });
  return {
    clock,
    backend,
    process: () => {
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
    },
  };
}

/** The ledger of `name`, oldest first, as [ISO tick, outcome, reason]. */
export async function ledger(p: Soniq, name: string): Promise<[string, string, string | null][]> {
  const rows = await p.schedules.history(name, { limit: 1000 });
  return rows.reverse().map((t) => [t.tickAt.toISOString(), t.outcome, t.reason]);
}
