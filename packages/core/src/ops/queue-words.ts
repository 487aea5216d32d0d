/**
 * How a queue's state and limits read, the same on every surface (the CLI's `queues list`, the dashboard's
 * queue tables, read-only or not): one word for an unpaused queue ("active", never "running", which is what
 * jobs do) and one text for its limits, so an operator comparing two screens sees the same thing.
 */
import type { QueueInfo } from "../common/types.js";

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
