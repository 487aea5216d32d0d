-- Custom migration (drizzle-kit generate --custom): guards drizzle-kit cannot express.
-- dead_letter is not a job status: dead-lettered jobs move to soniq_dead_letter_jobs.
CREATE TRIGGER `soniq_jobs_reject_dead_letter_insert`
BEFORE INSERT ON `soniq_jobs`
FOR EACH ROW WHEN NEW.status = 'dead_letter'
BEGIN
  SELECT RAISE(ABORT, 'soniq_jobs.status=dead_letter is rejected: DLQ rows live in soniq_dead_letter_jobs');
END;
--> statement-breakpoint
CREATE TRIGGER `soniq_jobs_reject_dead_letter_update`
BEFORE UPDATE OF `status` ON `soniq_jobs`
FOR EACH ROW WHEN NEW.status = 'dead_letter'
BEGIN
  SELECT RAISE(ABORT, 'soniq_jobs.status=dead_letter is rejected: DLQ rows live in soniq_dead_letter_jobs');
END;
--> statement-breakpoint
-- Terminal states never regress: once a job is done or cancelled its status never changes again.
CREATE TRIGGER `soniq_jobs_terminal_status`
BEFORE UPDATE OF `status` ON `soniq_jobs`
FOR EACH ROW WHEN OLD.status IN ('done', 'cancelled') AND NEW.status IS NOT OLD.status
BEGIN
  SELECT RAISE(ABORT, 'soniq_jobs_terminal_status: a done or cancelled job never changes status');
END;
