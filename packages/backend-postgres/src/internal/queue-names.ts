/**
 * A recursive CTE listing the distinct `queue` values of `from` (a table and its WHERE) by a skip scan: one
 * index probe per distinct queue, on an index whose leading column is `queue` and whose predicate covers
 * `where`, however many rows each queue holds. PostgreSQL 15 has no skip scan of its own.
 */
export function distinctQueues(name: string, table: string, where: string): string {
  const and = where ? `AND ${where}` : "";
  return `${name} AS (
    (SELECT queue FROM ${table} ${where ? `WHERE ${where}` : ""} ORDER BY queue LIMIT 1)
    UNION ALL
    SELECT (SELECT t.queue FROM ${table} t WHERE t.queue > ${name}.queue ${and} ORDER BY t.queue LIMIT 1)
    FROM ${name} WHERE ${name}.queue IS NOT NULL)`;
}
