/** The audit row write every facet's operator action shares (`soniq_audit_log`). */
import type { AuditRecord } from "@soniq/core/backend";
import type { SqliteContext } from "./context.js";
import { jsonOrNull, NOW } from "./sql.js";

const INSERT_AUDIT = `INSERT INTO soniq_audit_log (id, at, actor, action, target, params, outcome, details)
  VALUES (@id, ${NOW}, @actor, @action, @target, @params, @outcome, @details)`;

/** Write one audit row (inside the caller's transaction when there is one). */
export function writeAudit(ctx: SqliteContext, record: AuditRecord): void {
  ctx.statement(INSERT_AUDIT).run({
    id: record.id,
    actor: record.actor,
    action: record.action,
    target: record.target,
    params: jsonOrNull(record.params, "params"),
    outcome: record.outcome,
    details: jsonOrNull(record.details, "details"),
  });
}
