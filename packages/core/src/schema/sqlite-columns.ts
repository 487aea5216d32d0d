/** Column helpers shared by the SQLite schema's files (sqlite.ts, sqlite-webhooks.ts). */
import { sql } from "drizzle-orm";
import { integer, text } from "drizzle-orm/sqlite-core";

export const nowMs = sql`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`;
export const ms = (name: string) => integer(name, { mode: "timestamp_ms" });
export const json = <T>(name: string) => text(name, { mode: "json" }).$type<T>();
