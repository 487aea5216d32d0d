/** The paged, filtered SELECT behind `jobs.list` and `deadLetters.list` (queries arrive normalised by core). */

/** One condition of a list filter: SQL with one `?` standing for its value. */
export type Condition = readonly [clause: string, value: unknown];

/**
 * One page of `select` (a `SELECT ... FROM ...`): the conditions whose value is not null (null = no filter)
 * joined with AND (their `?` numbered as parameters in order), then ORDER BY `orderBy`, LIMIT and OFFSET.
 */
export function listQuery(
  select: string,
  conditions: readonly Condition[],
  orderBy: string,
  page: { limit: number; offset: number },
): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  for (const [clause, value] of conditions) {
    if (value === null) continue;
    values.push(value);
    where.push(clause.replace("?", `$${values.length}`));
  }
  values.push(page.limit, page.offset);
  return {
    text: `${select}
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${orderBy}
      LIMIT $${values.length - 1} OFFSET $${values.length}`,
    values,
  };
}
