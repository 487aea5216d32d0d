/**
 * `@soniq/backend-sqlite/testing`: the SQLite backend with fault injection, for conformance kits and
 * backend tests; never for production. The main entry carries no test seam: this one builds a normal
 * backend and wraps its runs facet (internal/interrupted-move.ts).
 */
import { SoniqError } from "@soniq/core/backend";
import { buildSqliteBackend, type SqliteBackend } from "./backend.js";
import { withInterruptedMove } from "./internal/interrupted-move.js";
import type { SqliteBackendOptions, SqliteBackendTarget } from "./options.js";

/** The faults `sqliteBackendWithFaults()` can inject. */
export interface SqliteFaultHooks {
  /**
   * Consulted in `runs.settle` for each dead-letter move, after the insert into soniq_dead_letter_jobs
   * and before the delete from soniq_jobs. Returning true fails the move there: the settle call's
   * transaction rolls back and the call rejects with `SONIQ_BACKEND_ERROR`, nothing changed. It adds a SQL
   * function and a temporary trigger (`soniq_interrupt_dead_letter_move`) to the backend's connection.
   */
  interruptDeadLetterMove: (jobId: string) => boolean;
}

/** `sqliteBackend(target, options)` whose dead-letter moves fail when `faults.interruptDeadLetterMove` says so. */
export function sqliteBackendWithFaults(
  target: SqliteBackendTarget,
  options: SqliteBackendOptions | undefined,
  faults: SqliteFaultHooks,
): SqliteBackend {
  const problems = faultProblems(faults);
  if (problems.length > 0) {
    const message = `Invalid sqliteBackendWithFaults faults: ${problems.join("; ")}.`;
    throw new SoniqError("SONIQ_INVALID_OPTIONS", message, { context: { problems } });
  }
  const interrupt = faults.interruptDeadLetterMove;
  return buildSqliteBackend(target, options, (runs, ctx) => withInterruptedMove(runs, ctx, interrupt));
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
