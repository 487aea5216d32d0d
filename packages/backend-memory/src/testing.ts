/**
 * `@soniq/backend-memory/testing`: the memory backend with fault injection, for conformance kits and
 * backend tests; never for production. The main entry carries no test seam: this one builds a normal
 * backend and wraps its runs facet (internal/interrupted-move.ts).
 */
import { SoniqError } from "@soniq/core/backend";
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
  const problems = faultProblems(faults);
  if (problems.length > 0) {
    const message = `Invalid memoryBackendWithFaults faults: ${problems.join("; ")}.`;
    throw new SoniqError("SONIQ_INVALID_OPTIONS", message, { context: { problems } });
  }
  const interrupt = faults.interruptDeadLetterMove;
  return buildMemoryBackend(options, (runs, store) => withInterruptedMove(runs, store, interrupt));
}

function faultProblems(faults: unknown): string[] {
  if (typeof faults !== "object" || faults === null) return ["faults must be an object"];
  const problems = Object.keys(faults)
    .filter((key) => key !== "interruptDeadLetterMove")
    .map((key) => `no fault "${key}" (it takes interruptDeadLetterMove)`);
  if (typeof (faults as { interruptDeadLetterMove?: unknown }).interruptDeadLetterMove !== "function") {
    problems.push("interruptDeadLetterMove must be a function");
  }
  return problems;
}
