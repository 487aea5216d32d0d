/**
 * `@soniq/backend-memory/testing`: the memory backend with fault injection, for conformance kits and
 * backend tests; never for production. The main entry carries no test seam: this one builds a normal
 * backend and wraps its runs facet (internal/interrupted-move.ts).
 */
import { checkFaultHooks } from "@soniq/core/backend";
import { buildMemoryBackend, type MemoryBackend } from "./backend.js";
import { withInterruptedMove } from "./internal/interrupted-move.js";
import type { MemoryBackendOptions } from "./options.js";

/** The faults `memoryBackendWithFaults()` can inject. */
export interface MemoryFaultHooks {
  /**
   * Consulted before each dead-letter move of `runs.settle`; when it returns true the move fails between its
   * two steps (dead-letter row inserted, job not yet deleted): the call rejects with `SONIQ_BACKEND_ERROR`
   * and nothing of it is applied.
   */
  interruptDeadLetterMove: (jobId: string) => boolean;
}

/** `memoryBackend(options)` whose dead-letter moves fail when `faults.interruptDeadLetterMove` says so. */
export function memoryBackendWithFaults(
  options: MemoryBackendOptions | undefined,
  faults: MemoryFaultHooks,
): MemoryBackend {
  checkFaultHooks(faults, "memoryBackendWithFaults");
  const interrupt = faults.interruptDeadLetterMove;
  return buildMemoryBackend(options, (runs, store) => withInterruptedMove(runs, store, interrupt));
}
