CREATE TABLE `soniq_flow_steps` (
	`flow_id` text NOT NULL,
	`ref` text NOT NULL,
	`seq` integer NOT NULL,
	`job_id` text NOT NULL,
	`job_ids` text NOT NULL,
	`job_name` text NOT NULL,
	`job` text NOT NULL,
	`depends_on` text NOT NULL,
	`dependents` text NOT NULL,
	`on_parent_failure` text NOT NULL,
	`state` text NOT NULL,
	`pending_parents` integer NOT NULL,
	`reason` text,
	`added_by` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`finished_at` integer,
	PRIMARY KEY(`flow_id`, `ref`),
	FOREIGN KEY (`flow_id`) REFERENCES `soniq_flows`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "soniq_flow_steps_state_check" CHECK("soniq_flow_steps"."state" in ('waiting', 'queued', 'processing', 'done', 'dead_lettered', 'held', 'cancelled'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idx_soniq_flow_steps_job_id` ON `soniq_flow_steps` (`job_id`);--> statement-breakpoint
CREATE TABLE `soniq_flows` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text,
	`state` text DEFAULT 'running' NOT NULL,
	`created_by` text NOT NULL,
	`steps_total` integer DEFAULT 0 NOT NULL,
	`steps_open` integer DEFAULT 0 NOT NULL,
	`steps_failed` integer DEFAULT 0 NOT NULL,
	`steps_held` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`finished_at` integer,
	CONSTRAINT "soniq_flows_state_check" CHECK("soniq_flows"."state" in ('running', 'held', 'succeeded', 'failed', 'cancelled'))
);
--> statement-breakpoint
CREATE INDEX `idx_soniq_flows_state` ON `soniq_flows` (`state`,`id`);--> statement-breakpoint
CREATE INDEX `idx_soniq_flows_name` ON `soniq_flows` (`name`,`id`);--> statement-breakpoint
ALTER TABLE `soniq_dead_letter_jobs` ADD `flow_id` text;--> statement-breakpoint
ALTER TABLE `soniq_dead_letter_jobs` ADD `step_ref` text;--> statement-breakpoint
ALTER TABLE `soniq_jobs` ADD `flow_id` text;--> statement-breakpoint
ALTER TABLE `soniq_jobs` ADD `step_ref` text;