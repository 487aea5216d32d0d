/**
 * The versions facet (capability `versions`, DESIGN.md section 20): the queued jobs and dead letters whose args
 * are older than their job's version, and the rewrite `soniq.jobs.upgrade` makes: one statement per batch, each
 * row guarded by the version it was read with (and, for a job, by still being queued).
 */
import type { OutdatedArgs, OutdatedQuery, VersionedTable, VersionsFacet } from "@soniq/core/backend";
import { type PgContext, query } from "./internal/context.js";

/** The rows of each table that may be rewritten: queued jobs (a running job is upcast by its run), dead letters. */
const FROM: Record<VersionedTable, string> = {
  jobs: `soniq_jobs WHERE status = 'queued' AND`,
  deadLetters: `soniq_dead_letter_jobs WHERE`,
};

const MATCH = `job_name = $1 AND args_version IS NOT NULL AND args_version < $2`;

/** $1 ids, $2 the versions they were read with, $3 their new args as one JSON array (by position), $4 the version. */
const REWRITE: Record<VersionedTable, string> = {
  jobs: `UPDATE soniq_jobs j SET args = $3::jsonb -> (u.n::int - 1), args_version = $4, updated_at = now()
    FROM unnest($1::uuid[], $2::int[]) WITH ORDINALITY AS u(id, from_version, n)
    WHERE j.id = u.id AND j.args_version = u.from_version AND j.status = 'queued'`,
  deadLetters: `UPDATE soniq_dead_letter_jobs d SET args = $3::jsonb -> (u.n::int - 1), args_version = $4
    FROM unnest($1::uuid[], $2::int[]) WITH ORDINALITY AS u(id, from_version, n)
    WHERE d.id = u.id AND d.args_version = u.from_version`,
};

function values(query: OutdatedQuery): unknown[] {
  return [query.jobName, query.below];
}

export function versionsFacet(ctx: PgContext): VersionsFacet {
  return {
    count: async (q) => {
      const text = `SELECT count(*)::int AS n FROM ${FROM[q.table]} ${MATCH}`;
      const res = await query<{ n: number }>(ctx, "versions.count", { text, values: values(q) });
      return res.rows[0]?.n ?? 0;
    },
    list: async (page) => {
      const text = `SELECT id::text AS id, args, args_version FROM ${FROM[page.table]} ${MATCH}
        AND ($3::uuid IS NULL OR id > $3::uuid) ORDER BY id LIMIT $4`;
      const res = await query<{ id: string; args: unknown; args_version: number }>(ctx, "versions.list", {
        text,
        values: [...values(page), page.afterId, page.limit],
      });
      return res.rows.map((r): OutdatedArgs => ({ id: r.id, args: r.args, argsVersion: r.args_version }));
    },
    rewrite: async (table, rows, version) => {
      if (rows.length === 0) return 0;
      const res = await query(ctx, "versions.rewrite", {
        text: REWRITE[table],
        values: [
          rows.map((r) => r.id),
          rows.map((r) => r.fromVersion),
          JSON.stringify(rows.map((r) => (r.args === undefined ? null : r.args))),
          version,
        ],
      });
      return res.rowCount ?? 0;
    },
  };
}
