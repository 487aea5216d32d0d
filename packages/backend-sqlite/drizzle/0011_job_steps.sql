CREATE TABLE `soniq_job_signals` (
	`id` text PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`name` text NOT NULL,
	`payload` text,
	`key` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`consumed_at` integer,
	`consumed_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idx_soniq_job_signals_key` ON `soniq_job_signals` (`job_id`,`key`);--> statement-breakpoint
CREATE INDEX `idx_soniq_job_signals_job` ON `soniq_job_signals` (`job_id`,`name`,`created_at`);--> statement-breakpoint
CREATE TABLE `soniq_job_steps` (
	`job_id` text NOT NULL,
	`name` text NOT NULL,
	`seq` integer NOT NULL,
	`kind` text NOT NULL,
	`state` text NOT NULL,
	`value` text,
	`error` text,
	`attempt` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`wake_at` integer,
	PRIMARY KEY(`job_id`, `name`),
	CONSTRAINT "soniq_job_steps_kind_check" CHECK("soniq_job_steps"."kind" in ('step', 'sleep', 'signal')),
	CONSTRAINT "soniq_job_steps_state_check" CHECK("soniq_job_steps"."state" in ('done', 'failed', 'waiting', 'timed_out'))
);
