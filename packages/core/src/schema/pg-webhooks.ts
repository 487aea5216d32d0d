/** The webhook tables of the PostgreSQL schema (re-exported by pg.ts; DESIGN.md section 18). */
import { sql } from "drizzle-orm";
import { boolean, check, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { DELIVERY_STATUSES, sqlList } from "./constants.js";
import { tstz } from "./pg-columns.js";

/** Webhook endpoints (upstream's table); `secret` holds the AES-256-GCM ciphertext, never the secret. */
export const soniqWebhookEndpoints = pgTable("soniq_webhook_endpoints", {
  id: uuid("id").primaryKey(),
  url: text("url").notNull(),
  secret: text("secret").notNull(),
  events: jsonb("events").notNull().$type<string[]>(),
  headers: jsonb("headers").notNull().$type<Record<string, string>>(),
  description: text("description"),
  active: boolean("active").notNull().default(true),
  maxAttempts: integer("max_attempts").notNull(),
  timeoutMs: integer("timeout_ms").notNull(),
  retry: jsonb("retry").notNull().$type<Record<string, unknown>>(),
  createdAt: tstz("created_at").notNull().defaultNow(),
  updatedAt: tstz("updated_at").notNull().defaultNow(),
});

/** The delivery outbox: one row per (event, endpoint), written with the event, attempted by workers. */
export const soniqWebhookDeliveries = pgTable(
  "soniq_webhook_deliveries",
  {
    id: uuid("id").primaryKey(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => soniqWebhookEndpoints.id, { onDelete: "cascade" }),
    event: text("event").notNull(),
    payload: jsonb("payload").notNull(),
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    nextRetryAt: tstz("next_retry_at"),
    lastError: text("last_error"),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: tstz("created_at").notNull().defaultNow(),
    deliveredAt: tstz("delivered_at"),
    updatedAt: tstz("updated_at").notNull().defaultNow(),
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
