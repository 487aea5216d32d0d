/** Scale-out: the start reports of several worker hosts that ran one set of jobs, merged into one. */
import type { StartReport } from "./host-protocol.js";

/** Folds per-index start counts into the report's once / duplicates / missing. */
export function tallyStarts(counts: Iterable<number>, runsPerJob: number) {
  let once = 0;
  let duplicates = 0;
  let missing = 0;
  for (const c of counts) {
    if (c < runsPerJob) missing++;
    else if (c === runsPerJob) once++;
    else duplicates += c - runsPerJob;
  }
  return { once, duplicates, missing };
}

function fold(values: readonly (number | null)[], pick: (a: number, b: number) => number): number | null {
  let out: number | null = null;
  for (const v of values) if (v !== null) out = out === null ? v : pick(out, v);
  return out;
}

/** Every report must come from `shared` tracking of the same `n` jobs (each carries `startCounts`). */
export function mergeReports(reports: readonly StartReport[]): StartReport {
  const [first] = reports;
  if (!first) throw new Error("no start reports to merge");
  if (reports.length === 1) return first;
  const n = first.expected;
  const counts = new Array<number>(n).fill(0);
  const times = first.startTimes ? new Array<number>(n).fill(0) : null;
  let unexpected = 0;
  for (const r of reports) {
    if (!r.startCounts || r.expected !== n || r.runsPerJob !== first.runsPerJob)
      throw new Error("start reports were not tracked as shared");
    unexpected += r.unexpected;
    for (let i = 0; i < n; i++) {
      const c = r.startCounts[i] ?? 0;
      if (c === 0) continue;
      counts[i] = (counts[i] ?? 0) + c;
      const t = r.startTimes?.[i] ?? 0;
      if (times && t > 0 && (times[i] === 0 || t < (times[i] as number))) times[i] = t;
    }
  }
  return {
    expected: n,
    runsPerJob: first.runsPerJob,
    ...tallyStarts(counts, first.runsPerJob),
    unexpected,
    firstStartAt: fold(
      reports.map((r) => r.firstStartAt),
      Math.min,
    ),
    lastStartAt: fold(
      reports.map((r) => r.lastStartAt),
      Math.max,
    ),
    startTimes: times,
    startCounts: counts,
  };
}
