-- Custom migration (drizzle-kit generate --custom): the worker's claim as functions, so that it is planned once
-- per connection instead of at every call (planning the claim cost more than running it: 0.3-0.5 ms a claim).
-- A prepared statement's generic plan is fixed while the table is small, and on a table never analyzed it then
-- read every queued row (a bitmap scan and a sort) as the table grew (test/claim-plan-growth.test.ts). Inside
-- these functions sequential scans, bitmap scans and sorts are switched off, so every plan, generic or not, is
-- the one the claim needs at any size: an ordered read of the fetch index that stops at the limit, and
-- primary-key lookups of the ids it took. JIT is off because the switched-off paths' cost pushes the estimate
-- above jit_above_cost. The claim commits asynchronously (set_config(..., true): local to the claim's own
-- transaction; see src/runs.ts). Paused and limited queues are left out as the statement did (queue-limits.ts).
CREATE OR REPLACE FUNCTION soniq_claim_any(p_limit int, p_worker uuid) RETURNS SETOF soniq_jobs
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off SET jit = off
AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  UPDATE soniq_jobs
  SET status = 'processing', attempts = attempts + 1, worker_id = p_worker, updated_at = now()
  WHERE id = ANY(ARRAY(
    SELECT j.id FROM soniq_jobs j
    WHERE j.status = 'queued' AND j.scheduled_at <= now()
      AND (p_worker IS NULL OR EXISTS (SELECT 1 FROM soniq_workers w WHERE w.id = p_worker))
      AND COALESCE(j.queue <> ALL(ARRAY(SELECT q.name FROM soniq_queues q WHERE q.paused
        OR q.concurrency IS NOT NULL OR q.group_concurrency IS NOT NULL OR q.rate_max IS NOT NULL)), true)
    ORDER BY j.priority, j.scheduled_at, j.created_at
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED))
  RETURNING soniq_jobs.*;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION soniq_claim_queue(p_limit int, p_worker uuid, p_queue text) RETURNS SETOF soniq_jobs
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off SET jit = off
AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  UPDATE soniq_jobs
  SET status = 'processing', attempts = attempts + 1, worker_id = p_worker, updated_at = now()
  WHERE id = ANY(ARRAY(
    SELECT j.id FROM soniq_jobs j
    WHERE j.status = 'queued' AND j.scheduled_at <= now() AND j.queue = p_queue
      AND (p_worker IS NULL OR EXISTS (SELECT 1 FROM soniq_workers w WHERE w.id = p_worker))
      AND NOT EXISTS (SELECT 1 FROM soniq_queues q WHERE q.name = p_queue AND (q.paused
        OR q.concurrency IS NOT NULL OR q.group_concurrency IS NOT NULL OR q.rate_max IS NOT NULL))
    ORDER BY j.priority, j.scheduled_at, j.created_at
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED))
  RETURNING soniq_jobs.*;
END;
$$;
