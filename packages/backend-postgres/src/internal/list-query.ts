/** The paged, filtered SELECT behind `jobs.list` and `deadLetters.list` (queries arrive normalised by core). */
import type { ListPosition } from "@soniq/core/backend";

/** One condition of a list filter: SQL whose every `?` stands for its one value. */
export type Condition = readonly [clause: string, value: unknown];

/**
 * The text search (`q`) and id set (`ids`) of a list filter. `strpos` takes every character literally (no
 * LIKE wildcards to escape); an empty id array matches no row.
 */
export function searchAndIds(q: { q: string | null; ids: readonly string[] | null }): Condition[] {
  return [
    ["id = ANY(?::uuid[])", q.ids === null ? null : [...q.ids]],
    [
      "(strpos(id::text, lower(?::text)) > 0 OR strpos(lower(job_name), lower(?::text)) > 0" +
        " OR strpos(lower(last_error), lower(?::text)) > 0)",
      q.q,
    ],
  ];
}

/**
 * A timestamptz column to the millisecond, as the dead-letter list index holds it (core/src/schema/pg.ts
 * `msOf`): that list orders and pages by this, then id, so rows moved in one millisecond order by id as on
 * every backend.
 */
export const msOf = (column: string) => `date_trunc('milliseconds', ${column} AT TIME ZONE 'UTC')`;

/** A Date parameter on the same scale as `msOf` (a UTC timestamp). */
export const msParam = (placeholder: string) => `(${placeholder}::timestamptz AT TIME ZONE 'UTC')`;

/** The conditions whose value is not null (null = no filter), their `?` numbered after `values`. */
export function whereClauses(conditions: readonly Condition[], values: unknown[]): string[] {
  const where: string[] = [];
  for (const [clause, value] of conditions) {
    if (value === null) continue;
    values.push(value);
    where.push(clause.replaceAll("?", `$${values.length}`));
  }
  return where;
}

export function whereSql(where: readonly string[]): string {
  return where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
}

/**
 * One page of `select` (a `SELECT ... FROM ...`) ordered by `at` (an `msOf` expression) and id, or by id
 * alone when `at` is null (jobs: the primary key, read backwards): newest first from the top or after a
 * position, nearest first before one (`newer`; core reverses that page).
 */
export function listQuery(
  select: string,
  conditions: readonly Condition[],
  at: string | null,
  page: { limit: number; offset: number; position: ListPosition | null },
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where = whereClauses(conditions, values);
  const p = page.position;
  if (p !== null) {
    const op = p.direction === "older" ? "<" : ">";
    if (at === null) {
      values.push(p.id);
      where.push(`id ${op} $${values.length}::uuid`);
    } else {
      values.push(p.at, p.id);
      const n = values.length;
      where.push(`(${at}, id) ${op} (${msParam(`$${n - 1}`)}, $${n}::uuid)`);
    }
  }
  const dir = p?.direction === "newer" ? "ASC" : "DESC";
  values.push(page.limit, page.offset);
  return {
    text: `${select} ${whereSql(where)}
      ORDER BY ${at === null ? "" : `${at} ${dir}, `}id ${dir}
      LIMIT $${values.length - 1} OFFSET $${values.length}`,
    values,
  };
}
