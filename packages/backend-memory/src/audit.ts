/** The audit facet: `soniq_audit_log` in memory (rows appended by the actions' own facets too). */
import type { AuditEntry, AuditFacet, AuditListQuery, AuditRecord } from "@soniq/core/backend";
import type { MemoryStore } from "./internal/store.js";

export function appendAudit(store: MemoryStore, record: AuditRecord, now = store.now()): void {
  store.auditLog.push({ ...record, at: new Date(now) });
}

function copy(entry: AuditEntry): AuditEntry {
  return { ...entry, at: new Date(entry.at.getTime()) };
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

export function auditFacet(store: MemoryStore): AuditFacet {
  return {
    record: async (entry) => appendAudit(store, entry),
    list: async (query) => list(store, query),
  };
}
