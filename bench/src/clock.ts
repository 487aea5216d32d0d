/**
 * One clock for every process of a run: milliseconds of the machine's monotonic clock (`process.hrtime`, which is
 * CLOCK_MONOTONIC on Linux: one clock for every process since boot, never stepped). Producer and worker run on the
 * same machine, so their readings compare directly. It used to be `performance.timeOrigin + performance.now()`,
 * which is anchored to the wall clock at each process's start: a step of the system clock between two processes'
 * starts (one of about 6 s in a run on 2026-12-02) shifted every cross-process duration by the step, and drain rates
 * came out negative.
 */
export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
