CREATE TABLE "soniq_schedule_ticks" (
	"schedule_name" text NOT NULL,
	"tick_at" timestamp with time zone NOT NULL,
	"outcome" text NOT NULL,
	"job_id" uuid,
	"reason" text,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "soniq_schedule_ticks_pkey" PRIMARY KEY("schedule_name","tick_at"),
	CONSTRAINT "soniq_schedule_ticks_outcome_check" CHECK ("soniq_schedule_ticks"."outcome" in ('fired', 'skipped', 'missed', 'deduplicated'))
);
--> statement-breakpoint
ALTER TABLE "soniq_recurring_jobs" ADD COLUMN "catch_up" jsonb DEFAULT '"latest"'::jsonb NOT NULL;