DROP INDEX "idx_soniq_jobs_fetch";--> statement-breakpoint
CREATE INDEX "idx_soniq_jobs_fetch_all" ON "soniq_jobs" USING btree ("priority","scheduled_at","created_at") WHERE status = 'queued';--> statement-breakpoint
CREATE INDEX "idx_soniq_jobs_fetch" ON "soniq_jobs" USING btree ("queue","priority","scheduled_at","created_at") WHERE status = 'queued';