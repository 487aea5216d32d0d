/** The audit facet: `soniq_audit_log` (actions write their rows in their own transactions too). */
import type { AuditEntry, AuditFacet, AuditListQuery } from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { type PgContext, readQuery } from "./internal/context.js";
import { translatePgError } from "./internal/errors.js";
import { type Row, toDate } from "./internal/rows.js";

export function auditFacet(ctx: PgContext): AuditFacet {
  return {
    record: async (entry) => {
      try {
        await writeAudit(ctx.pool, entry);
      } catch (err) {
        throw translatePgError(err, "audit.record");
      }
    },
    list: (q) => list(ctx, q),
  };
}

const LIST = `SELECT id, at, actor, action, target, params, outcome, details FROM soniq_audit_log
  WHERE ($1::text IS NULL OR action = $1) AND ($2::timestamptz IS NULL OR at >= $2)
  ORDER BY at DESC, id DESC LIMIT $3`;

const record = (v: unknown) => (typeof v === "object" && v !== null ? (v as Record<string, unknown>) : null);

function toEntry(r: Row): AuditEntry {
  return {
    id: String(r.id),
    at: toDate(r.at),
    actor: String(r.actor),
    action: String(r.action),
    target: r.target === null ? null : String(r.target),
    params: record(r.params),
    outcome: String(r.outcome),
    details: record(r.details),
  };
}

async function list(ctx: PgContext, q: AuditListQuery): Promise<AuditEntry[]> {
  const res = await readQuery(ctx, "audit.list", { text: LIST, values: [q.action, q.since, q.limit] });
  return res.rows.map(toEntry);
}
