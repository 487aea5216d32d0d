/**
 * Raw storage access for the conformance kit: plain SQL on a separate pool, so cases can check state
 * without trusting the backend's own methods.
 */
import type { BackendInspector } from "@soniq/testkit";
import type pg from "pg";
import { translatePgError } from "../src/internal/errors.js";
import { DEAD_LETTER_COLUMNS, JOB_COLUMNS, mapDeadLetterJob, mapJob } from "../src/internal/rows.js";

export function postgresInspector(pool: pg.Pool): Required<BackendInspector> {
  return {
    async readJob(id) {
      const res = await pool.query(`SELECT ${JOB_COLUMNS} FROM soniq_jobs WHERE id::text = $1`, [id]);
      return res.rows[0] ? mapJob(res.rows[0]) : null;
    },
    async readDeadLetterJob(id) {
      const res = await pool.query(
        `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs WHERE id::text = $1`,
        [id],
      );
      return res.rows[0] ? mapDeadLetterJob(res.rows[0]) : null;
    },
    async writeJobStatus(id, status) {
      // On a checked-out client, released without the error: pool.query() would discard the connection
      // after a failed statement, and the pool would open a new one in a later case (the kit's leak check
      // counts it against that case).
      const client = await pool.connect();
      try {
        await client.query("UPDATE soniq_jobs SET status = $2 WHERE id::text = $1", [id, status]);
      } catch (err) {
        throw translatePgError(err, "writeJobStatus");
      } finally {
        client.release();
      }
    },
    async backdateWorkerHeartbeat(workerId, byMs) {
      await pool.query(
        "UPDATE soniq_workers SET last_heartbeat = last_heartbeat - $2 * interval '1 millisecond' WHERE id::text = $1",
        [workerId, byMs],
      );
    },
  };
}
