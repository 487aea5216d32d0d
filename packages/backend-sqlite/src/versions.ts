/**
 * The versions facet (capability `versions`, DESIGN.md section 20): the queued jobs and dead letters whose args
 * are older than their job's version, and the rewrite `soniq.jobs.upgrade` makes, in one IMMEDIATE transaction.
 */
import type { OutdatedArgs, OutdatedQuery, VersionedTable, VersionsFacet } from "@soniq/core/backend";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { NOW } from "./internal/sql.js";

/** The rows of each table that may be rewritten: queued jobs (a running job is upcast by its run), dead letters. */
const FROM: Record<VersionedTable, string> = {
  jobs: `soniq_jobs WHERE status = 'queued' AND`,
  deadLetters: `soniq_dead_letter_jobs WHERE`,
};

const MATCH = `job_name = @jobName AND args_version IS NOT NULL AND args_version < @below`;

const REWRITE: Record<VersionedTable, string> = {
  jobs: `UPDATE soniq_jobs SET args = @args, args_version = @version, updated_at = ${NOW}
    WHERE id = @id AND args_version = @fromVersion AND status = 'queued'`,
  deadLetters: `UPDATE soniq_dead_letter_jobs SET args = @args, args_version = @version
    WHERE id = @id AND args_version = @fromVersion`,
};

interface Row {
  id: string;
  args: string;
  args_version: number;
}

function params(query: OutdatedQuery) {
  return { jobName: query.jobName, below: query.below };
}

export function versionsFacet(ctx: SqliteContext): VersionsFacet {
  return {
    count: (query) =>
      runSync("versions.count", () => {
        const sql = `SELECT count(*) AS n FROM ${FROM[query.table]} ${MATCH}`;
        return (ctx.statement(sql).get(params(query)) as { n: number }).n;
      }),
    list: (page) =>
      runSync("versions.list", () => {
        const sql = `SELECT id, args, args_version FROM ${FROM[page.table]} ${MATCH}
          AND (@afterId IS NULL OR id > @afterId) ORDER BY id LIMIT @limit`;
        const rows = ctx
          .statement(sql)
          .all({ ...params(page), afterId: page.afterId, limit: page.limit }) as Row[];
        return rows.map(
          (r): OutdatedArgs => ({
            id: r.id,
            args: JSON.parse(r.args) as unknown,
            argsVersion: r.args_version,
          }),
        );
      }),
    rewrite: (table, rows, version) =>
      runSync("versions.rewrite", () =>
        immediate(ctx, () => {
          const stmt = ctx.statement(REWRITE[table]);
          let written = 0;
          for (const r of rows) {
            const args = JSON.stringify(r.args) ?? "null";
            written += stmt.run({ id: r.id, fromVersion: r.fromVersion, args, version }).changes;
          }
          return written;
        }),
      ),
  };
}
