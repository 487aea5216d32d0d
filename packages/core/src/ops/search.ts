/**
 * A surface's search box (`q`) as a list filter. Core's text search matches a row's raw last error, before
 * `redact`: while a rule is active, a viewer who sees only the redacted text could still recover a secret one
 * character at a time from which searches find a row. So while redacting, `q` never reaches the text search:
 * a `q` that is an id finds that row (`ids`), any other `q` the rows of that job name exactly (`jobName`).
 * The dashboard, the MCP server and the CLI search the same way.
 */
import { isJobId } from "../common/ids.js";

/** The fields of a job or dead-letter filter a search sets. */
export interface SearchableFilter {
  jobName?: string | undefined;
  q?: string | undefined;
  ids?: readonly string[] | undefined;
}

/**
 * `filter` narrowed by the search `q` (unchanged without one): core's text search when nothing is redacted
 * (`redacting` false); otherwise the row with that id, or the rows with that exact job name. A search that
 * cannot match alongside the filter's own `ids` or `jobName` matches nothing (`ids: []`).
 */
export function searchFilter<F extends object>(
  filter: F & SearchableFilter,
  q: string | undefined,
  redacting: boolean,
): F & SearchableFilter {
  if (q === undefined || q === "") return filter;
  if (!redacting) return { ...filter, q };
  if (isJobId(q)) {
    const id = q.toLowerCase();
    const ids = filter.ids === undefined ? [id] : filter.ids.filter((i) => i.toLowerCase() === id);
    return { ...filter, ids };
  }
  if (filter.jobName !== undefined && filter.jobName !== q) return { ...filter, ids: [] };
  return { ...filter, jobName: q };
}

/** What a surface says its search matches. */
export function searchWords(redacting: boolean): string {
  return redacting
    ? "an id or a job name, exactly (redact is active: the last error is not searched)"
    : "text in the id, job name or last error, any case";
}
