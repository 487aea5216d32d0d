CREATE TABLE "soniq_job_signals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"name" text NOT NULL,
	"payload" jsonb,
	"key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"consumed_at" timestamp with time zone,
	"consumed_by" text
);
--> statement-breakpoint
CREATE TABLE "soniq_job_steps" (
	"job_id" uuid NOT NULL,
	"name" text NOT NULL,
	"seq" integer NOT NULL,
	"kind" text NOT NULL,
	"state" text NOT NULL,
	"value" jsonb,
	"error" text,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"wake_at" timestamp with time zone,
	CONSTRAINT "soniq_job_steps_pkey" PRIMARY KEY("job_id","name"),
	CONSTRAINT "soniq_job_steps_kind_check" CHECK ("soniq_job_steps"."kind" in ('step', 'sleep', 'signal')),
	CONSTRAINT "soniq_job_steps_state_check" CHECK ("soniq_job_steps"."state" in ('done', 'failed', 'waiting', 'timed_out'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "idx_soniq_job_signals_key" ON "soniq_job_signals" USING btree ("job_id","key");--> statement-breakpoint
CREATE INDEX "idx_soniq_job_signals_job" ON "soniq_job_signals" USING btree ("job_id","name","created_at");