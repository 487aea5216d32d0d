CREATE TABLE `soniq_schedule_ticks` (
	`schedule_name` text NOT NULL,
	`tick_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`job_id` text,
	`reason` text,
	`recorded_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	PRIMARY KEY(`schedule_name`, `tick_at`),
	CONSTRAINT "soniq_schedule_ticks_outcome_check" CHECK("soniq_schedule_ticks"."outcome" in ('fired', 'skipped', 'missed', 'deduplicated'))
);
--> statement-breakpoint
ALTER TABLE `soniq_recurring_jobs` ADD `catch_up` text DEFAULT '"latest"' NOT NULL;