-- queues.list estimates done and cancelled counts beyond EXACT_COUNTS_UP_TO from the planner's row estimate
-- for `queue = $1 AND status = $2`. Per-column statistics would multiply the two selectivities as if queue
-- and status were independent; this multivariate MCV list keeps their joint frequencies (ANALYZE fills it).
CREATE STATISTICS IF NOT EXISTS "soniq_jobs_queue_status_stats" (mcv) ON "queue", "status" FROM "soniq_jobs";
