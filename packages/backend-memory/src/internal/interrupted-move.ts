/**
 * The fault hook `interruptDeadLetterMove`, installed around the runs facet only by `memoryBackendWithFaults()`
 * (testing.ts, the `/testing` entry), so the production entry and the hot `runs.settle` carry no test branch.
 * Before a settle, the hook is asked about each dead_letter item that would move (its job processing under
 * the item's attempt, the first item for its id, no dead-letter row with its id yet); when it says so, the
 * move fails between its two steps as a dropped connection would: the call rejects and nothing of it is
 * applied. Otherwise the facet settles.
 */
import type { RunsFacet } from "@soniq/core/backend";
import { deadLetterMoveInterrupted } from "./errors.js";
import type { MemoryStore } from "./store.js";

export function withInterruptedMove(
  runs: RunsFacet,
  store: MemoryStore,
  interrupt: (jobId: string) => boolean,
): RunsFacet {
  return {
    claim: runs.claim,
    reportProgress: runs.reportProgress,
    settle: async (items, workerId) => {
      const taken = new Set<string>();
      for (const item of items) {
        if (taken.has(item.id) || store.processingAt(item.id, item.attempt, workerId) === undefined) continue;
        if (item.kind !== "dead_letter") taken.add(item.id);
        else if (!store.deadLetters.has(item.id)) {
          taken.add(item.id);
          if (interrupt(item.id)) throw deadLetterMoveInterrupted(item.id);
        }
      }
      return runs.settle(items, workerId);
    },
  };
}
