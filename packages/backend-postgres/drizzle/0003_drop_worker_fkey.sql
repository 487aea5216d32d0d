ALTER TABLE "soniq_jobs" DROP CONSTRAINT "soniq_jobs_worker_id_fkey";
