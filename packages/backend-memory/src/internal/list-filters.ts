/** The text search (`q`) and id set (`ids`) of a list filter, as predicates over stored rows. */

/** Rows whose id, job name or last error contains `q`, ignoring case (null: every row). */
export function textSearch(
  q: string | null,
): ((row: { id: string; jobName: string; lastError: string | null }) => boolean) | null {
  if (q === null) return null;
  const needle = q.toLowerCase();
  return (row) =>
    row.id.toLowerCase().includes(needle) ||
    row.jobName.toLowerCase().includes(needle) ||
    row.lastError?.toLowerCase().includes(needle) === true;
}

/** Core's lower-case ids as a set (null: no id filter; empty: no row matches). */
export function idSet(ids: readonly string[] | null): ReadonlySet<string> | null {
  return ids === null ? null : new Set(ids);
}
