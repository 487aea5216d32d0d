/** The `audit` facet, and the audit record other facets write in the same transaction as their action. */

import type { AuditAction, AuditEntry } from "../common/types.js";

/**
 * One audit row, built by core (id, actor, action, target, params, outcome, details). A backend writes it
 * in the same transaction as the action it records, where it has transactions; an action taking an
 * optional record (cancel, replay, purge, a schedule's setPaused, remove and manual recordTick) writes it
 * only when it changed something (core records the not-found outcome itself).
 */
export interface AuditRecord {
  id: string;
  actor: string;
  action: AuditAction;
  target: string | null;
  params: Record<string, unknown> | null;
  outcome: string;
  details: Record<string, unknown> | null;
}

/** A normalised audit filter. */
export interface AuditListQuery {
  action: string | null;
  /** At or after this instant. */
  since: Date | null;
  /** 1..1000. */
  limit: number;
}

export interface AuditFacet {
  /** Write one audit row on its own (actions whose facet takes no audit record). */
  record(entry: AuditRecord): Promise<void>;
  /** Newest first (at descending, then id descending). */
  list(query: AuditListQuery): Promise<AuditEntry[]>;
}
