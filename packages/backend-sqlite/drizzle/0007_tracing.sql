ALTER TABLE `soniq_dead_letter_jobs` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `soniq_dead_letter_jobs` ADD `trace_context` text;--> statement-breakpoint
ALTER TABLE `soniq_jobs` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `soniq_jobs` ADD `trace_context` text;