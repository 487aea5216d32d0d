CREATE TABLE "soniq_webhook_deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"event" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"next_retry_at" timestamp with time zone,
	"last_error" text,
	"response_status" integer,
	"response_body" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "soniq_webhook_deliveries_status_check" CHECK ("soniq_webhook_deliveries"."status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "soniq_webhook_endpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"secret" text NOT NULL,
	"events" jsonb NOT NULL,
	"headers" jsonb NOT NULL,
	"description" text,
	"active" boolean DEFAULT true NOT NULL,
	"max_attempts" integer NOT NULL,
	"timeout_ms" integer NOT NULL,
	"retry" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "soniq_queues" ADD COLUMN "lag_alert_ms" integer;--> statement-breakpoint
ALTER TABLE "soniq_webhook_deliveries" ADD CONSTRAINT "soniq_webhook_deliveries_endpoint_id_soniq_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."soniq_webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idx_soniq_webhook_deliveries_due" ON "soniq_webhook_deliveries" USING btree ("next_retry_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "idx_soniq_webhook_deliveries_endpoint" ON "soniq_webhook_deliveries" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE INDEX "idx_soniq_webhook_deliveries_created" ON "soniq_webhook_deliveries" USING btree ("created_at");