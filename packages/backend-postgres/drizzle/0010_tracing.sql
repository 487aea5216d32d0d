ALTER TABLE "soniq_dead_letter_jobs" ADD COLUMN "trace_id" text;--> statement-breakpoint
ALTER TABLE "soniq_dead_letter_jobs" ADD COLUMN "trace_context" jsonb;--> statement-breakpoint
ALTER TABLE "soniq_jobs" ADD COLUMN "trace_id" text;--> statement-breakpoint
ALTER TABLE "soniq_jobs" ADD COLUMN "trace_context" jsonb;