/**
 * The fault hook `interruptDeadLetterMove`, installed around the runs facet only by `sqliteBackendWithFaults()`
 * (testing.ts, the `/testing` entry), so the production entry and the hot `runs.settle` carry no test branch.
 * It puts the hook where a dead-letter move has its two steps: a temporary trigger (this connection only)
 * after each insert into `soniq_dead_letter_jobs` asks the hook, through a SQL function, whether to fail
 * there; when it says so the trigger aborts the statement between the move's insert and its delete, the
 * settle's transaction rolls back, and the call rejects with nothing changed, as a dropped connection would
 * leave it.
 */
import { type RunsFacet, SoniqError } from "@soniq/core/backend";
import type { SqliteContext } from "./context.js";

const ASK = "soniq_interrupt_dead_letter_move";
// Created at the first settle, not at construction: the table exists only once migrations ran.
const TRIGGER = `CREATE TEMP TRIGGER IF NOT EXISTS ${ASK} AFTER INSERT ON main.soniq_dead_letter_jobs
  WHEN ${ASK}(NEW.id) BEGIN SELECT RAISE(ABORT, 'dead-letter move interrupted'); END`;

export function withInterruptedMove(
  runs: RunsFacet,
  ctx: SqliteContext,
  interrupt: (jobId: string) => boolean,
): RunsFacet {
  let interrupted: string | null = null;
  ctx.db.function(ASK, { deterministic: false }, (id: unknown) => {
    if (!interrupt(String(id))) return 0;
    interrupted = String(id);
    return 1;
  });
  return {
    claim: runs.claim,
    reportProgress: runs.reportProgress,
    settle: async (items, workerId) => {
      ctx.statement(TRIGGER).run();
      interrupted = null;
      try {
        return await runs.settle(items, workerId);
      } catch (err) {
        if (interrupted === null) throw err;
        throw interruptedError(interrupted, err);
      }
    },
  };
}

function interruptedError(id: string, cause: unknown): SoniqError {
  return new SoniqError(
    "SONIQ_BACKEND_ERROR",
    `runs.settle: the dead-letter move of ${id} was interrupted between its insert and its delete ` +
      "(sqliteBackendWithFaults: interruptDeadLetterMove); the transaction rolled back, nothing changed.",
    { context: { id }, cause },
  );
}
