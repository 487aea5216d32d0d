/** The audit facet: `soniq_audit_log` in memory (rows appended by the actions' own facets too). */
import type { AuditEntry, AuditFacet, AuditListQuery } from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import type { MemoryStore } from "./internal/store.js";

export function auditFacet(store: MemoryStore): AuditFacet {
  return {
    record: async (entry) => writeAudit(store, entry),
    list: async (query) => list(store, query),
  };
}

function list(store: MemoryStore, query: AuditListQuery): AuditEntry[] {
  const out: AuditEntry[] = [];
  // Appended in time order, so newest first is the log read backwards.
  for (let i = store.auditLog.length - 1; i >= 0 && out.length < query.limit; i--) {
    const entry = store.auditLog[i] as AuditEntry;
    if (query.since !== null && entry.at < query.since) break;
    if (query.action !== null && entry.action !== query.action) continue;
    out.push(copy(entry));
  }
  return out;
}

function copy(entry: AuditEntry): AuditEntry {
  return { ...entry, at: new Date(entry.at.getTime()) };
}
