/**
 * Whether a bulk action's filter narrows the set: an operator surface (the dashboard, the MCP server, the CLI)
 * asks for an explicit "all" before replaying or purging every dead letter, and a filter that selects nothing
 * less (`{}`, `since: 0`, an `until` in the future, a search every row matches) is "all" whatever it spells.
 * Decided by counting, not by reading the filter: the matches against every dead letter.
 */
import type { DeadLettersFacet } from "../contract/index.js";
import type { DeadLetterBulkFilter } from "../dead-letters/bulk.js";
import { deadLetterMatch } from "../jobs/queries.js";

/** What the guard reads of an app: its backend's dead-letter count (`soniq` is one). */
export interface BulkGuardSource {
  readonly backend: { readonly deadLetters: Pick<DeadLettersFacet, "count"> };
}

/** True when `filter` matches every dead letter there is (and there is at least one). */
export async function matchesEveryDeadLetter(
  soniq: BulkGuardSource,
  filter: DeadLetterBulkFilter,
): Promise<boolean> {
  const { deadLetters } = soniq.backend;
  const matches = await deadLetters.count(deadLetterMatch(filter, "filter"));
  if (matches === 0) return false;
  return matches >= (await deadLetters.count(deadLetterMatch({}, "filter")));
}
