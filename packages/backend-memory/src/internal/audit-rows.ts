/** The audit row write every facet's operator action shares (`soniq_audit_log` in memory). */
import type { AuditRecord } from "@soniq/core/backend";
import type { MemoryStore } from "./store.js";

export function writeAudit(store: MemoryStore, record: AuditRecord, now = store.now()): void {
  store.auditLog.push({ ...record, at: new Date(now) });
}
