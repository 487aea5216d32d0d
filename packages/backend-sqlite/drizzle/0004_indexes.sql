DROP INDEX `idx_soniq_dead_letter_jobs_job_name`;--> statement-breakpoint
DROP INDEX `idx_soniq_dead_letter_jobs_reason`;--> statement-breakpoint
DROP INDEX `idx_soniq_dead_letter_jobs_moved_at`;--> statement-breakpoint
CREATE INDEX `idx_soniq_dead_letter_jobs_moved_at` ON `soniq_dead_letter_jobs` (`moved_to_dead_letter_at`,`id`);--> statement-breakpoint
DROP INDEX `idx_soniq_jobs_worker_id`;--> statement-breakpoint
DROP INDEX `idx_soniq_jobs_processing`;--> statement-breakpoint
CREATE INDEX `idx_soniq_jobs_finished` ON `soniq_jobs` (`queue`,`status`) WHERE status IN ('done', 'cancelled');--> statement-breakpoint
CREATE INDEX `idx_soniq_jobs_processing` ON `soniq_jobs` (`queue`,`group`,`worker_id`) WHERE status = 'processing';