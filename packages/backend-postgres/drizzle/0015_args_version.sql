ALTER TABLE "soniq_dead_letter_jobs" ADD COLUMN "args_version" integer;--> statement-breakpoint
ALTER TABLE "soniq_jobs" ADD COLUMN "args_version" integer;--> statement-breakpoint
ALTER TABLE "soniq_task_registry" ADD COLUMN "version" integer;