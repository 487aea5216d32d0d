CREATE TABLE `soniq_audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`params` text,
	`outcome` text NOT NULL,
	`details` text
);
--> statement-breakpoint
CREATE INDEX `idx_soniq_audit_log_at` ON `soniq_audit_log` (`at`);--> statement-breakpoint
CREATE INDEX `idx_soniq_audit_log_action` ON `soniq_audit_log` (`action`,`at`);--> statement-breakpoint
CREATE TABLE `soniq_metrics` (
	`bucket_start` integer NOT NULL,
	`queue` text NOT NULL,
	`job_name` text NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`retried` integer DEFAULT 0 NOT NULL,
	`dead_lettered` integer DEFAULT 0 NOT NULL,
	`snoozed` integer DEFAULT 0 NOT NULL,
	`run_ms_sum` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`bucket_start`, `queue`, `job_name`)
);
--> statement-breakpoint
CREATE TABLE `soniq_queue_starts` (
	`queue` text NOT NULL,
	`started_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`job_id` text NOT NULL,
	PRIMARY KEY(`queue`, `started_at`, `job_id`)
);
--> statement-breakpoint
CREATE TABLE `soniq_queues` (
	`name` text PRIMARY KEY NOT NULL,
	`paused` integer DEFAULT false NOT NULL,
	`paused_at` integer,
	`concurrency` integer,
	`group_concurrency` integer,
	`rate_max` integer,
	`rate_per_ms` integer,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL
);
--> statement-breakpoint
ALTER TABLE `soniq_jobs` ADD `group` text;--> statement-breakpoint
CREATE INDEX `idx_soniq_jobs_processing` ON `soniq_jobs` (`queue`,`group`) WHERE status = 'processing';