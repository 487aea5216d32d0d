CREATE TABLE "soniq_flow_steps" (
	"flow_id" uuid NOT NULL,
	"ref" text NOT NULL,
	"seq" integer NOT NULL,
	"job_id" uuid NOT NULL,
	"job_ids" jsonb NOT NULL,
	"job_name" text NOT NULL,
	"job" jsonb NOT NULL,
	"depends_on" jsonb NOT NULL,
	"dependents" jsonb NOT NULL,
	"on_parent_failure" text NOT NULL,
	"state" text NOT NULL,
	"pending_parents" integer NOT NULL,
	"reason" text,
	"added_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "soniq_flow_steps_pkey" PRIMARY KEY("flow_id","ref"),
	CONSTRAINT "soniq_flow_steps_state_check" CHECK ("soniq_flow_steps"."state" in ('waiting', 'queued', 'processing', 'done', 'dead_lettered', 'held', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "soniq_flows" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text,
	"state" text DEFAULT 'running' NOT NULL,
	"created_by" text NOT NULL,
	"steps_total" integer DEFAULT 0 NOT NULL,
	"steps_open" integer DEFAULT 0 NOT NULL,
	"steps_failed" integer DEFAULT 0 NOT NULL,
	"steps_held" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "soniq_flows_state_check" CHECK ("soniq_flows"."state" in ('running', 'held', 'succeeded', 'failed', 'cancelled'))
);
--> statement-breakpoint
ALTER TABLE "soniq_dead_letter_jobs" ADD COLUMN "flow_id" uuid;--> statement-breakpoint
ALTER TABLE "soniq_dead_letter_jobs" ADD COLUMN "step_ref" text;--> statement-breakpoint
ALTER TABLE "soniq_jobs" ADD COLUMN "flow_id" uuid;--> statement-breakpoint
ALTER TABLE "soniq_jobs" ADD COLUMN "step_ref" text;--> statement-breakpoint
ALTER TABLE "soniq_flow_steps" ADD CONSTRAINT "soniq_flow_steps_flow_id_soniq_flows_id_fk" FOREIGN KEY ("flow_id") REFERENCES "public"."soniq_flows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "idx_soniq_flow_steps_job_id" ON "soniq_flow_steps" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "idx_soniq_flows_state" ON "soniq_flows" USING btree ("state","id");--> statement-breakpoint
CREATE INDEX "idx_soniq_flows_name" ON "soniq_flows" USING btree ("name","id");