/** `soniq_queues` rows as core's `QueueSettings`, and the audit row writer the actions share. */
import type { AuditRecord, QueueSettings } from "@soniq/core/backend";
import type pg from "pg";
import { type Row, toDate } from "./rows.js";

export const QUEUE_COLUMNS =
  "name, paused, paused_at, concurrency, group_concurrency, rate_max, rate_per_ms, updated_at";

const intOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function toQueueSettings(name: string, r: Row | undefined): QueueSettings {
  const rateMax = intOrNull(r?.rate_max);
  const perMs = intOrNull(r?.rate_per_ms);
  return {
    name,
    paused: r?.paused === true,
    pausedAt: r?.paused_at == null ? null : toDate(r.paused_at),
    concurrency: intOrNull(r?.concurrency),
    groupConcurrency: intOrNull(r?.group_concurrency),
    rateLimit: rateMax === null || perMs === null ? null : { max: rateMax, perMs },
    updatedAt: r?.updated_at == null ? null : toDate(r.updated_at),
  };
}

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
