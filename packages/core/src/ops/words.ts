/**
 * How things read to an operator, the same on every surface (the CLI, the dashboard, the MCP server): one
 * word for an unpaused queue ("active", never "running", which is what jobs do) and one text for its limits,
 * durations in words, a progress bar's percent, the count of workers by state. An operator comparing two
 * screens sees the same thing.
 */
import type { QueueInfo } from "../common/types.js";
import type { WorkerLiveness } from "../worker/service.js";

export type QueueStateWord = "active" | "paused";

export function queueStateWord(paused: boolean): QueueStateWord {
  return paused ? "paused" : "active";
}

/** A span of milliseconds in the words the CLI's `--rate 100/1m` takes: 60_000 -> "1m", 5_400_000 -> "1h30m". */
export function durationWords(ms: number): string {
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
    ["ms", 1],
  ];
  let rest = Math.max(0, Math.round(ms));
  let text = "";
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) text += `${n}${unit}`;
    rest -= n * size;
  }
  return text || "0ms";
}

/** `concurrency 5, group 1, rate 100/1m` (only the limits set), or `none`. */
export function queueLimitsText(
  q: Pick<QueueInfo, "concurrency" | "groupConcurrency" | "rateLimit">,
): string {
  const parts = [
    q.concurrency === null ? null : `concurrency ${q.concurrency}`,
    q.groupConcurrency === null ? null : `group ${q.groupConcurrency}`,
    q.rateLimit ? `rate ${q.rateLimit.max}/${durationWords(q.rateLimit.perMs)}` : null,
  ].filter((p): p is string => p !== null);
  return parts.length === 0 ? "none" : parts.join(", ");
}

/**
 * How far a progress value says the job is, in percent (0 to 100), for the bars of the dashboard and the
 * CLI; null when the value does not say. A number is a percentage (clamped); an object says it with a
 * numeric `percent`, or with `done` (or `current`) of `total`. Any other value is shown as JSON only.
 */
export function progressPercent(value: unknown): number | null {
  const clamp = (n: number) => (Number.isFinite(n) ? Math.min(100, Math.max(0, n)) : null);
  if (typeof value === "number") return clamp(value);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.percent === "number") return clamp(v.percent);
  const done = typeof v.done === "number" ? v.done : v.current;
  if (typeof done === "number" && typeof v.total === "number" && v.total > 0) {
    return clamp((done / v.total) * 100);
  }
  return null;
}

/**
 * The count of each state, as operator surfaces print it: "2 live, 1 stale, 3 stopped" (stale and stopped
 * only when there are some). The CLI and the dashboard both show this.
 */
export function workerCounts(workers: readonly { state: WorkerLiveness }[]): string {
  const count = (state: WorkerLiveness) => workers.filter((w) => w.state === state).length;
  const stale = count("stale");
  const stopped = count("stopped");
  return `${count("live")} live${stale > 0 ? `, ${stale} stale` : ""}${stopped > 0 ? `, ${stopped} stopped` : ""}`;
}
