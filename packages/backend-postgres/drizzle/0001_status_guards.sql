-- Custom migration (drizzle-kit generate --custom): guards drizzle-kit cannot express.
-- Terminal states never regress: once a job is done or cancelled its status never changes again.
-- The trigger only fires for rows that were terminal, so the worker's hot path pays nothing.
CREATE OR REPLACE FUNCTION soniq_jobs_reject_terminal_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'soniq_jobs % is %: a done or cancelled job never changes status (attempted %)',
    OLD.id, OLD.status, NEW.status
    USING ERRCODE = 'check_violation', CONSTRAINT = 'soniq_jobs_terminal_status',
          TABLE = 'soniq_jobs', COLUMN = 'status';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER soniq_jobs_terminal_status
BEFORE UPDATE OF status ON soniq_jobs
FOR EACH ROW
WHEN (OLD.status IN ('done', 'cancelled') AND NEW.status IS DISTINCT FROM OLD.status)
EXECUTE FUNCTION soniq_jobs_reject_terminal_change();
