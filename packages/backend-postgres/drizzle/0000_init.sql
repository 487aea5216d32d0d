CREATE TABLE "soniq_dead_letter_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"job_name" text NOT NULL,
	"args" jsonb NOT NULL,
	"queue" text NOT NULL,
	"priority" integer NOT NULL,
	"max_attempts" integer NOT NULL,
	"attempts" integer NOT NULL,
	"last_error" text,
	"dead_letter_reason" text NOT NULL,
	"tags" jsonb,
	"resurrection_count" integer DEFAULT 0 NOT NULL,
	"last_resurrection_at" timestamp with time zone,
	"original_created_at" timestamp with time zone NOT NULL,
	"moved_to_dead_letter_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "soniq_jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"job_name" text NOT NULL,
	"args" jsonb NOT NULL,
	"args_hash" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 3 NOT NULL,
	"queue" text DEFAULT 'default' NOT NULL,
	"priority" integer DEFAULT 100 NOT NULL,
	"unique_job" boolean DEFAULT false NOT NULL,
	"dedup_key" text,
	"scheduled_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"last_error" text,
	"result" jsonb,
	"producer_id" text,
	"worker_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "soniq_jobs_status_check" CHECK ("soniq_jobs"."status" in ('queued', 'processing', 'done', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "soniq_leases" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "soniq_recurring_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"job_name" text NOT NULL,
	"schedule_type" text NOT NULL,
	"schedule_value" text NOT NULL,
	"timezone" text,
	"args" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"queue" text,
	"priority" integer,
	"max_attempts" integer,
	"status" text DEFAULT 'active' NOT NULL,
	"last_run_at" timestamp with time zone,
	"next_run_at" timestamp with time zone,
	"run_count" integer DEFAULT 0 NOT NULL,
	"last_job_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "soniq_recurring_jobs_schedule_type_check" CHECK ("soniq_recurring_jobs"."schedule_type" in ('cron', 'interval')),
	CONSTRAINT "soniq_recurring_jobs_status_check" CHECK ("soniq_recurring_jobs"."status" in ('active', 'paused'))
);
--> statement-breakpoint
CREATE TABLE "soniq_task_registry" (
	"task_name" text NOT NULL,
	"worker_id" text NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "soniq_task_registry_pkey" PRIMARY KEY("task_name","worker_id")
);
--> statement-breakpoint
CREATE TABLE "soniq_workers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"hostname" text NOT NULL,
	"pid" integer NOT NULL,
	"queues" text[] DEFAULT '{}'::text[] NOT NULL,
	"concurrency" integer DEFAULT 1 NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"last_heartbeat" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"version" text,
	"metadata" jsonb,
	CONSTRAINT "soniq_workers_status_check" CHECK ("soniq_workers"."status" in ('active', 'stopping', 'stopped'))
);
--> statement-breakpoint
ALTER TABLE "soniq_jobs" ADD CONSTRAINT "soniq_jobs_worker_id_fkey" FOREIGN KEY ("worker_id") REFERENCES "public"."soniq_workers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idx_soniq_dead_letter_jobs_job_name" ON "soniq_dead_letter_jobs" USING btree ("job_name");--> statement-breakpoint
CREATE INDEX "idx_soniq_dead_letter_jobs_queue" ON "soniq_dead_letter_jobs" USING btree ("queue");--> statement-breakpoint
CREATE INDEX "idx_soniq_dead_letter_jobs_reason" ON "soniq_dead_letter_jobs" USING btree ("dead_letter_reason");--> statement-breakpoint
CREATE INDEX "idx_soniq_dead_letter_jobs_moved_at" ON "soniq_dead_letter_jobs" USING btree ("moved_to_dead_letter_at");--> statement-breakpoint
CREATE INDEX "idx_soniq_jobs_fetch" ON "soniq_jobs" USING btree ("queue","priority","scheduled_at") WHERE status = 'queued';--> statement-breakpoint
CREATE UNIQUE INDEX "idx_soniq_jobs_dedup_key" ON "soniq_jobs" USING btree ("dedup_key") WHERE status = 'queued' AND dedup_key IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "idx_soniq_jobs_unique_queued" ON "soniq_jobs" USING btree ("job_name","args_hash") WHERE status = 'queued' AND unique_job;--> statement-breakpoint
CREATE INDEX "idx_soniq_jobs_expires_at" ON "soniq_jobs" USING btree ("expires_at") WHERE expires_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "idx_soniq_jobs_worker_id" ON "soniq_jobs" USING btree ("worker_id") WHERE worker_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "idx_soniq_recurring_jobs_next_run_at" ON "soniq_recurring_jobs" USING btree ("next_run_at");--> statement-breakpoint
CREATE INDEX "idx_soniq_task_registry_task_name" ON "soniq_task_registry" USING btree ("task_name");--> statement-breakpoint
CREATE INDEX "idx_soniq_workers_last_heartbeat" ON "soniq_workers" USING btree ("last_heartbeat");--> statement-breakpoint
CREATE INDEX "idx_soniq_workers_status" ON "soniq_workers" USING btree ("status");