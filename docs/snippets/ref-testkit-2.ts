import type { DeadLetterJob, Job } from "@soniq/core";
import type pg from "pg";

declare function mapJob(row: unknown): Job | null;
declare function mapDeadLetter(row: unknown): DeadLetterJob | null;
declare function translateError(err: unknown): Error;

// #region snippet
import type { BackendInspector } from "@soniq/testkit";

export function myInspector(pool: pg.Pool): Required<BackendInspector> {
  return {
    readJob: async (id) =>
      mapJob((await pool.query("SELECT * FROM soniq_jobs WHERE id::text = $1", [id])).rows[0]),
    readDeadLetterJob: async (id) =>
      mapDeadLetter(
        (await pool.query("SELECT * FROM soniq_dead_letter_jobs WHERE id::text = $1", [id])).rows[0],
      ),
    writeJobStatus: async (id, status) => {
      try {
        await pool.query("UPDATE soniq_jobs SET status = $2 WHERE id::text = $1", [id, status]);
      } catch (err) {
        throw translateError(err); // your backend's driver-error translation (SONIQ_INVALID_STATUS_TRANSITION)
      }
    },
    backdateWorkerHeartbeat: async (workerId, byMs) => {
      await pool.query(
        "UPDATE soniq_workers SET last_heartbeat = last_heartbeat - $2 * interval '1 millisecond' WHERE id::text = $1",
        [workerId, byMs],
      );
    },
  };
}
// #endregion snippet
