/**
 * `@soniq/backend-sqlite/testing`: the SQLite backend with fault injection, for conformance kits and
 * backend tests; never for production. The main entry carries no test seam: this one builds a normal
 * backend and wraps its runs facet (internal/interrupted-move.ts).
 */
import { checkFaultHooks } from "@soniq/core/backend";
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
  checkFaultHooks(faults, "sqliteBackendWithFaults");
  const interrupt = faults.interruptDeadLetterMove;
  return buildSqliteBackend(target, options, (runs, ctx) => withInterruptedMove(runs, ctx, interrupt));
}
