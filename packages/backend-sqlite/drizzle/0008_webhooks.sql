CREATE TABLE `soniq_webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`event` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`next_retry_at` integer,
	`last_error` text,
	`response_status` integer,
	`response_body` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`delivered_at` integer,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`endpoint_id`) REFERENCES `soniq_webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "soniq_webhook_deliveries_status_check" CHECK("soniq_webhook_deliveries"."status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE INDEX `idx_soniq_webhook_deliveries_due` ON `soniq_webhook_deliveries` (`next_retry_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `idx_soniq_webhook_deliveries_endpoint` ON `soniq_webhook_deliveries` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `idx_soniq_webhook_deliveries_created` ON `soniq_webhook_deliveries` (`created_at`);--> statement-breakpoint
CREATE TABLE `soniq_webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`secret` text NOT NULL,
	`events` text NOT NULL,
	`headers` text NOT NULL,
	`description` text,
	`active` integer DEFAULT true NOT NULL,
	`max_attempts` integer NOT NULL,
	`timeout_ms` integer NOT NULL,
	`retry` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL
);
--> statement-breakpoint
ALTER TABLE `soniq_queues` ADD `lag_alert_ms` integer;