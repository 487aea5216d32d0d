/**
 * Leak check: handles a case left behind after its backend was closed and its harness cleaned up.
 * `process.getActiveResourcesInfo()` lists what keeps the event loop alive (unref'ed timers are not
 * listed, which is the point: every library timer must be unref'ed).
 */
import { eventually } from "./eventually.js";

const WATCHED = new Set([
  "Timeout",
  "TCPSocketWrap",
  "TCPServerWrap",
  "PipeWrap",
  "PipeServerWrap",
  "UDPWrap",
  "ProcessWrap",
  "FSEventWrap",
  "StatWatcher",
]);

export type ResourceCounts = Map<string, number>;

export function resourceCounts(): ResourceCounts {
  const counts: ResourceCounts = new Map();
  for (const type of process.getActiveResourcesInfo()) {
    if (WATCHED.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** Resource types with more live handles than `before`, after letting closing handles settle. */
export async function leakedSince(before: ResourceCounts, settleMs = 1000): Promise<string[]> {
  const diff = () => {
    const now = resourceCounts();
    const leaked: string[] = [];
    for (const [type, n] of now) {
      const extra = n - (before.get(type) ?? 0);
      if (extra > 0) leaked.push(`${extra} x ${type}`);
    }
    return leaked;
  };
  try {
    return await eventually(
      () => {
        const leaked = diff();
        if (leaked.length > 0) throw new Error(leaked.join(", "));
        return [];
      },
      { timeoutMs: settleMs, intervalMs: 20 },
    );
  } catch {
    return diff();
  }
}
