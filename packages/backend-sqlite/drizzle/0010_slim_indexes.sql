DROP INDEX `idx_soniq_jobs_expires_at`;--> statement-breakpoint
DROP INDEX `idx_soniq_jobs_finished`;--> statement-breakpoint
CREATE INDEX `idx_soniq_jobs_finished` ON `soniq_jobs` (`queue`,`status`,`expires_at`) WHERE status IN ('done', 'cancelled');