/**
 * One clock for every process of a run: wall-clock milliseconds with sub-millisecond resolution.
 * Producer and worker run on the same machine, so their readings compare directly.
 */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
