ALTER TABLE `soniq_dead_letter_jobs` ADD `args_version` integer;--> statement-breakpoint
ALTER TABLE `soniq_jobs` ADD `args_version` integer;--> statement-breakpoint
ALTER TABLE `soniq_task_registry` ADD `version` integer;