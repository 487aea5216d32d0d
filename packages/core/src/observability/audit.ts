/**
 * The audit log: every operator action through the Soniq API writes one `soniq_audit_log` row with the
 * caller's `{ actor }` (default "api"), in the same transaction as the action where the backend has one.
 * `auditRecord` builds the row core hands to a facet method, which writes it with the change; `audited`
 * writes the row of an action that found nothing to change. Only the bulk dead-letter operations, chunked
 * over many transactions, write theirs on its own (`backend.audit.record`) once they are done.
 */
import { randomUUID } from "node:crypto";
import { storableText } from "../common/json.js";
import { optionsObject } from "../common/option-table.js";
import { AUDIT_ACTIONS, type AuditAction, type AuditEntry } from "../common/types.js";
import type { AuditListQuery, AuditRecord, GuardedBackend } from "../contract/index.js";
import { filterObject, invalid, optionalDate, optionalString } from "../jobs/queries.js";

/** The actor when the caller names none. */
export const DEFAULT_ACTOR = "api";

/** The `{ actor }` every write takes as its last options argument. */
export interface ActorOptions {
  /** Who did it (the CLI passes the OS user, the dashboard the key's label). Default "api". */
  actor?: string;
}

/**
 * The actor from a write's options. As for every options argument, one that is not an object or has a key
 * other than `actor` and the write's `otherKeys` is `SONIQ_INVALID_OPTIONS` (a typo such as `dryrun` must
 * not run the write without it); the actor itself must be a non-empty string of at most 200 characters
 * without a NUL or a lone surrogate (`SONIQ_INVALID_ARGUMENT`).
 */
export function actorOf(options: unknown, what: string, otherKeys: readonly string[] = []): string {
  const actor = optionsObject(options, what, ["actor", ...otherKeys]).actor;
  if (actor === undefined) return DEFAULT_ACTOR;
  if (
    typeof actor !== "string" ||
    actor.length === 0 ||
    actor.length > 200 ||
    storableText(actor) !== actor
  ) {
    throw invalid(
      `${what}.actor`,
      "expected a non-empty string of at most 200 characters, without a NUL or a lone surrogate",
      actor,
    );
  }
  return actor;
}

/** One audit row for `action`, ready for a facet method (outcome "ok" unless the caller says otherwise). */
export function auditRecord(
  action: AuditAction,
  actor: string,
  target: string | null,
  params: Record<string, unknown> | null,
  outcome = "ok",
  details: Record<string, unknown> | null = null,
): AuditRecord {
  // A target is whatever id the caller passed (a not-found row records it too); PostgreSQL text takes no NUL.
  const stored = target === null ? null : target.replaceAll("\0", "\uFFFD");
  return { id: randomUUID(), actor, action, target: stored, params, outcome, details };
}

/**
 * Writes an audit row core writes on its own (a miss, a bulk operation's one row), when the backend keeps an
 * audit log (the `audit` capability); without one the action is not audited, and `audit.list` says so.
 */
export async function recordAudit(
  backend: Pick<GuardedBackend<unknown>, "audit" | "supports">,
  record: AuditRecord,
): Promise<void> {
  if (backend.supports("audit")) await backend.audit.record(record);
}

/**
 * Runs an action whose facet method writes `record` with its change, and only then; when the action found
 * nothing to change, the row is written here with outcome `missed(result)`, "not_found" unless said
 * otherwise (there is nothing to commit it with).
 */
export async function audited<T>(
  backend: Pick<GuardedBackend<unknown>, "audit" | "supports">,
  record: AuditRecord,
  action: (record: AuditRecord) => Promise<T>,
  applied: (result: T) => boolean,
  missed: (result: T) => string = () => "not_found",
): Promise<T> {
  const result = await action(record);
  if (!applied(result)) await recordAudit(backend, { ...record, outcome: missed(result) });
  return result;
}

export interface AuditListFilter {
  /** Default 100, at most 1000. */
  limit?: number;
  action?: AuditAction;
  /** At or after this instant. */
  since?: Date;
}

export function auditListQuery(
  filter: AuditListFilter | undefined,
  what = "audit.list(filter)",
): AuditListQuery {
  const f = filterObject(filter, what, ["limit", "action", "since"]);
  const action = optionalString(f.action, `${what}.action`);
  if (action !== null && !(AUDIT_ACTIONS as readonly string[]).includes(action)) {
    throw invalid(`${what}.action`, `expected one of ${AUDIT_ACTIONS.join(", ")}`, action);
  }
  const limit = f.limit ?? 100;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw invalid(`${what}.limit`, "expected an integer >= 1", limit);
  }
  return { action, since: optionalDate(f.since, `${what}.since`), limit: Math.min(limit, 1000) };
}

/** `soniq.audit`: read the log. */
export class AuditService {
  readonly #backend: GuardedBackend<unknown>;

  constructor(backend: GuardedBackend<unknown>) {
    this.#backend = backend;
  }

  /** Newest first. */
  list(filter?: AuditListFilter): Promise<AuditEntry[]> {
    try {
      return this.#backend.audit.list(auditListQuery(filter));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
