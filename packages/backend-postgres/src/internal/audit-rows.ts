/** The audit row write every facet's operator action shares (`soniq_audit_log`): a statement, or a CTE. */
import type { AuditRecord } from "@soniq/core/backend";
import type pg from "pg";

const INSERT_AUDIT = `INSERT INTO soniq_audit_log (id, actor, action, target, params, outcome, details)
  VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb)`;

/** Write one audit row on `client` (inside the action's transaction). */
export async function writeAudit(client: pg.ClientBase | pg.Pool, record: AuditRecord): Promise<void> {
  await client.query(INSERT_AUDIT, auditValues(record));
}

/**
 * A CTE writing `record` once if `source` (an earlier CTE of the statement) returned a row, so an action
 * and its audit row commit as one statement. Its parameters start at `$first` (see `auditValues`).
 */
export function auditCte(source: string, first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `audited AS (INSERT INTO soniq_audit_log (id, actor, action, target, params, outcome, details)
  SELECT ${p(0)}::uuid, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}::jsonb, ${p(5)}, ${p(6)}::jsonb
  FROM (SELECT 1 FROM ${source} LIMIT 1) s)`;
}

export function auditValues(record: AuditRecord): unknown[] {
  return [
    record.id,
    record.actor,
    record.action,
    record.target,
    record.params === null ? null : JSON.stringify(record.params),
    record.outcome,
    record.details === null ? null : JSON.stringify(record.details),
  ];
}
