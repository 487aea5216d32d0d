/** The `deadLetters` facet: list, count, read, replay and purge dead-letter rows. */

import type { DeadLetterJob, TraceContext } from "../common/types.js";
import type { AuditRecord } from "./audit.js";
import type { ListPosition } from "./jobs.js";
import type { ReplaySteps } from "./steps.js";
import type { NewWebhookDelivery } from "./webhooks.js";

/** A normalised dead-letter filter: every key present, `null` = no filter on it. */
export interface DeadLetterMatch {
  jobName: string | null;
  queue: string | null;
  reason: string | null;
  /** Moved at or after this instant. */
  since: Date | null;
  /** Moved before this instant. */
  until: Date | null;
  /** Text search over id, job name and last error, as `JobListQuery.q`. */
  q: string | null;
  /** Only rows with these ids, as `JobListQuery.ids` (empty = no row matches). */
  ids: readonly string[] | null;
}

/** A page of the dead letters matching the filter. */
export interface DeadLetterListQuery extends DeadLetterMatch {
  /** 1..1000. */
  limit: number;
  /** >= 0; 0 whenever `position` is set. */
  offset: number;
  /** Page from this row instead of from the top; null = from the top. */
  position: ListPosition | null;
}

export interface ReplayRequest {
  /** Fresh UUID for the new job, chosen by core. */
  newId: string;
  /** Each `null` keeps the dead-letter row's value (`scheduledAt` null = due now). */
  queue: string | null;
  priority: number | null;
  scheduledAt: Date | null;
  /** The new job's trace (stored as is; core decides: the replay's own, or the dead letter's). */
  traceId: string | null;
  traceContext: TraceContext | null;
  /** Webhook deliveries of `job.resurrected`, written in the replay's transaction when it applies. */
  deliveries?: readonly NewWebhookDelivery[];
  /**
   * Whether the row is a flow step's dead letter, as core read it (a row's flow never changes): `true` lets a
   * backend take the step's path at once (the new job rejoins the flow), `false` the plain one. Absent: not
   * known, the backend finds out itself.
   */
  step?: boolean;
  /**
   * The checkpoints the new job starts with (capability `steps`): the dead letter's `done` ones moved when
   * `keep`, and `resolve`'s recorded `done`. Absent: keep, resolve nothing. Unconsumed signals always move to
   * the new job. A backend without the capability ignores it.
   */
  steps?: ReplaySteps;
}

export interface DeadLettersFacet {
  /** Newest first: moved_to_dead_letter_at (whole milliseconds) descending, then id descending. */
  list(query: DeadLetterListQuery): Promise<DeadLetterJob[]>;
  /** How many rows match (exact: a bulk operation's dry run reports it). */
  count(match: DeadLetterMatch): Promise<number>;
  get(id: string): Promise<DeadLetterJob | null>;
  /**
   * In one transaction: insert a queued job (new id, attempts 0, same name/args/max_attempts) and bump the
   * dead-letter row's resurrection_count and last_resurrection_at. Returns the new id, or null if no row.
   */
  replay(id: string, request: ReplayRequest, audit?: AuditRecord): Promise<string | null>;
  /** Delete a dead-letter row. False when there was none. */
  purge(id: string, audit?: AuditRecord): Promise<boolean>;
}
