DROP INDEX `idx_soniq_jobs_worker_id`;--> statement-breakpoint
DROP INDEX `idx_soniq_jobs_processing`;--> statement-breakpoint
CREATE INDEX `idx_soniq_jobs_processing` ON `soniq_jobs` (`queue`,`group`,`worker_id`) WHERE status = 'processing';