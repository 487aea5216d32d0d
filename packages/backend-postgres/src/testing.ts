/**
 * `@soniq/backend-postgres/testing`: the Postgres backend with fault injection, for conformance kits and
 * backend tests; never for production. The main entry carries no test seam: this one builds a normal
 * backend and wraps its runs facet (internal/interrupted-move.ts).
 */
import { checkFaultHooks } from "@soniq/core/backend";
import { buildPostgresBackend, type PostgresBackend } from "./backend.js";
import { type DeadLetterInterrupt, withInterruptedMove } from "./internal/interrupted-move.js";
import type { PostgresBackendOptions, PostgresConnection } from "./options.js";

export type { DeadLetterInterrupt };

/** The faults `postgresBackendWithFaults()` can inject. */
export interface PostgresFaultHooks {
  /**
   * Consulted before each `runs.settle` that holds dead_letter items. Return undefined for the normal
   * path (one statement on the pool). Return a function to run this settle instead inside an explicit
   * transaction on a dedicated connection, with the function awaited between the statement and COMMIT:
   * it may `pg_terminate_backend(session.pid)` from another connection, or throw, and the settle must
   * then reject and leave everything as it was.
   */
  interruptDeadLetterMove: () => DeadLetterInterrupt | undefined;
}

/** `postgresBackend(connection, options)` whose dead-letter moves can be interrupted before they commit. */
export function postgresBackendWithFaults(
  connection: PostgresConnection,
  options: PostgresBackendOptions | undefined,
  faults: PostgresFaultHooks,
): PostgresBackend {
  checkFaultHooks(faults, "postgresBackendWithFaults");
  const interrupt = faults.interruptDeadLetterMove;
  return buildPostgresBackend(connection, options, (runs, ctx) => withInterruptedMove(runs, ctx, interrupt));
}
