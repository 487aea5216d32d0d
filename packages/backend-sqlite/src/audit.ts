/** The audit facet: `soniq_audit_log` (actions write their rows in their own transactions too). */
import type { AuditEntry, AuditFacet, AuditListQuery } from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { runSync, type SqliteContext } from "./internal/context.js";

export function auditFacet(ctx: SqliteContext): AuditFacet {
  return {
    record: (entry) => runSync("audit.record", () => writeAudit(ctx, entry)),
    list: (query) => runSync("audit.list", () => list(ctx, query)),
  };
}

interface AuditRow {
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  params: string | null;
  outcome: string;
  details: string | null;
}

const LIST = `SELECT id, at, actor, action, target, params, outcome, details FROM soniq_audit_log
  WHERE (@action IS NULL OR action = @action) AND (@since IS NULL OR at >= @since)
  ORDER BY at DESC, rowid DESC LIMIT @limit`;

function toEntry(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: new Date(r.at),
    actor: r.actor,
    action: r.action,
    target: r.target,
    params: r.params === null ? null : (JSON.parse(r.params) as Record<string, unknown>),
    outcome: r.outcome,
    details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>),
  };
}

function list(ctx: SqliteContext, query: AuditListQuery): AuditEntry[] {
  const rows = ctx.statement(LIST).all({
    action: query.action,
    since: query.since === null ? null : query.since.getTime(),
    limit: query.limit,
  }) as AuditRow[];
  return rows.map(toEntry);
}
