-- Custom migration (drizzle-kit generate --custom): the terminal-state guard (0001) fires AFTER the update instead of
-- BEFORE it. A BEFORE row trigger makes PostgreSQL lock the old row before it evaluates the trigger's WHEN, so every
-- status change paid a row lock, one more WAL record, even though the guard only fires for rows that were done or
-- cancelled; an AFTER row trigger evaluates its WHEN on the row the update already holds and queues nothing when it
-- is false. The guard is the same: a change away from done or cancelled still fails its statement with
-- check_violation on the constraint soniq_jobs_terminal_status, and the transaction writes nothing.
DROP TRIGGER IF EXISTS soniq_jobs_terminal_status ON soniq_jobs;--> statement-breakpoint
CREATE TRIGGER soniq_jobs_terminal_status
AFTER UPDATE OF status ON soniq_jobs
FOR EACH ROW
WHEN (OLD.status IN ('done', 'cancelled') AND NEW.status IS DISTINCT FROM OLD.status)
EXECUTE FUNCTION soniq_jobs_reject_terminal_change();
