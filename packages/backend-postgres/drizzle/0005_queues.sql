CREATE TABLE "soniq_audit_log" (
	"id" uuid PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"params" jsonb,
	"outcome" text NOT NULL,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "soniq_metrics" (
	"bucket_start" timestamp with time zone NOT NULL,
	"queue" text NOT NULL,
	"job_name" text NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"retried" integer DEFAULT 0 NOT NULL,
	"dead_lettered" integer DEFAULT 0 NOT NULL,
	"snoozed" integer DEFAULT 0 NOT NULL,
	"run_ms_sum" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "soniq_metrics_pkey" PRIMARY KEY("bucket_start","queue","job_name")
);
--> statement-breakpoint
CREATE TABLE "soniq_queue_starts" (
	"queue" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"job_id" uuid NOT NULL,
	CONSTRAINT "soniq_queue_starts_pkey" PRIMARY KEY("queue","started_at","job_id")
);
--> statement-breakpoint
CREATE TABLE "soniq_queues" (
	"name" text PRIMARY KEY NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"paused_at" timestamp with time zone,
	"concurrency" integer,
	"group_concurrency" integer,
	"rate_max" integer,
	"rate_per_ms" integer,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "soniq_jobs" ADD COLUMN "group" text;--> statement-breakpoint
CREATE INDEX "idx_soniq_audit_log_at" ON "soniq_audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "idx_soniq_audit_log_action" ON "soniq_audit_log" USING btree ("action","at");--> statement-breakpoint
CREATE INDEX "idx_soniq_jobs_processing" ON "soniq_jobs" USING btree ("queue","group") WHERE status = 'processing';