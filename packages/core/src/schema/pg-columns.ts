/** Column helpers shared by the PostgreSQL schema's files (pg.ts, pg-webhooks.ts). */
import { sql } from "drizzle-orm";
import { type AnyPgColumn, timestamp } from "drizzle-orm/pg-core";

export const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * A timestamptz truncated to the millisecond (UTC), the order dead letters page by. Written the same in the
 * backend's queries (`msOf` in backend-postgres list-query.ts) so the planner matches the index expression.
 */
export const msOf = (column: AnyPgColumn) => sql`date_trunc('milliseconds', ${column} AT TIME ZONE 'UTC')`;
