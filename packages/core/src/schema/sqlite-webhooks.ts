/** The webhook tables of the SQLite schema (re-exported by sqlite.ts; DESIGN.md section 18). */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { DELIVERY_STATUSES, sqlList } from "./constants.js";
import { json, ms, nowMs } from "./sqlite-columns.js";

/** Webhook endpoints (upstream's table); `secret` holds the AES-256-GCM ciphertext, never the secret. */
export const soniqWebhookEndpoints = sqliteTable("soniq_webhook_endpoints", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  secret: text("secret").notNull(),
  events: json<string[]>("events").notNull(),
  headers: json<Record<string, string>>("headers").notNull(),
  description: text("description"),
  active: integer("active", { mode: "boolean" }).notNull().default(true),
  maxAttempts: integer("max_attempts").notNull(),
  timeoutMs: integer("timeout_ms").notNull(),
  retry: json<Record<string, unknown>>("retry").notNull(),
  createdAt: ms("created_at").notNull().default(nowMs),
  updatedAt: ms("updated_at").notNull().default(nowMs),
});

/** The delivery outbox: one row per (event, endpoint), written with the event, attempted by workers. */
export const soniqWebhookDeliveries = sqliteTable(
  "soniq_webhook_deliveries",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => soniqWebhookEndpoints.id, { onDelete: "cascade" }),
    event: text("event").notNull(),
    payload: json<unknown>("payload").notNull(),
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    nextRetryAt: ms("next_retry_at"),
    lastError: text("last_error"),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: ms("created_at").notNull().default(nowMs),
    deliveredAt: ms("delivered_at"),
    updatedAt: ms("updated_at").notNull().default(nowMs),
  },
  (t) => [
    check(
      "soniq_webhook_deliveries_status_check",
      sql`${t.status} in (${sql.raw(sqlList(DELIVERY_STATUSES))})`,
    ),
    index("idx_soniq_webhook_deliveries_due").on(t.nextRetryAt).where(sql`status = 'pending'`),
    index("idx_soniq_webhook_deliveries_endpoint").on(t.endpointId, t.createdAt),
    index("idx_soniq_webhook_deliveries_created").on(t.createdAt),
  ],
);
