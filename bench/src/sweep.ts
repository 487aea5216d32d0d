/**
 * W5/W5b sweep: one run of the system's own retention sweep, timed call to answer, with the database's CPU
 * over it (measurements.ts seeds the expired rows after the drain).
 */
import { now } from "./clock.js";
import { startDbCpu } from "./db-cpu.js";
import type { MeasureContext } from "./measure.js";
import type { RetentionSweep } from "./systems/types.js";

export interface SweepResult {
  ms: number;
  /** Rows the sweep reported deleted. */
  rows: number;
  /** CPU seconds of the database's server processes over the sweep (db-cpu.ts), or null. */
  dbCpuSeconds: number | null;
}

/**
 * One run of a system's own retention sweep, timed from the call to its answer; the database's CPU is
 * sampled over the same window (the sweep's connection is open before it, so it counts from its reading).
 */
export async function runSweep(
  ctx: MeasureContext,
  open: (target: MeasureContext["target"]) => Promise<RetentionSweep>,
): Promise<SweepResult> {
  const sweeper = await open(ctx.target);
  try {
    const cpu = ctx.database ? await startDbCpu(ctx.adminUrl, ctx.database) : null;
    const startedAt = now();
    const rows = await sweeper.sweep();
    const ms = now() - startedAt;
    const dbCpuSeconds = cpu ? await cpu.stop() : null;
    return { ms, rows, dbCpuSeconds };
  } finally {
    await sweeper.close();
  }
}
