/** Soniq on PostgreSQL (`@soniq/backend-postgres`), on the same server as the peers. */
import { postgresBackend } from "@soniq/backend-postgres";
import pg from "pg";
import { SoniqSession } from "./soniq-session.js";
import type { Counts, SystemAdapter, SystemTarget, TaskKind } from "./types.js";
import { TASK_NAMES } from "./types.js";

const COUNTS = `SELECT
  (SELECT count(*) FROM soniq_jobs WHERE job_name = $1 AND status IN ('queued', 'processing'))::int AS pending,
  (SELECT count(*) FROM soniq_jobs WHERE job_name = $1 AND status = 'done')::int AS done,
  (SELECT count(*) FROM soniq_dead_letter_jobs WHERE job_name = $1)::int AS failed,
  (SELECT count(DISTINCT i) FROM (
     SELECT args->>'i' AS i FROM soniq_jobs WHERE job_name = $1
     UNION ALL SELECT args->>'i' FROM soniq_dead_letter_jobs WHERE job_name = $1) AS all_rows)::int AS distinct`;

function requireUrl(target: SystemTarget): string {
  if (!target.databaseUrl) throw new Error("soniq-postgres needs a Postgres database");
  return target.databaseUrl;
}

export const soniqPostgresSystem: SystemAdapter = {
  id: "soniq-postgres",
  label: "Soniq postgres (contract loop)",
  storage: "postgres",
  inProcess: false,
  notes:
    "INTERIM: @soniq/backend-postgres driven by a minimal loop on the Backend contract, not core's worker",
  async prepare(target) {
    const backend = postgresBackend({ connectionString: requireUrl(target) });
    try {
      await backend.migrate();
    } finally {
      await backend.close();
    }
  },
  async open(target) {
    const url = requireUrl(target);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const countQuery = async (kind: TaskKind): Promise<Counts> => {
      const row = (await pool.query<Counts>(COUNTS, [TASK_NAMES[kind]])).rows[0];
      if (!row) throw new Error("soniq counts returned no row");
      return row;
    };
    return new SoniqSession(postgresBackend({ connectionString: url }), countQuery, () => pool.end());
  },
};
