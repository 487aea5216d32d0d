/** The durable-step tables of the PostgreSQL schema (re-exported by pg.ts; DESIGN.md section 19). */
import { sql } from "drizzle-orm";
import {
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { JOB_STEP_KINDS, JOB_STEP_STATES, sqlList } from "./constants.js";
import { tstz } from "./pg-columns.js";

/**
 * A job's checkpoints, one row per occurrence name. `job_id` has no foreign key: the rows stay with the job's
 * dead letter (same id) and move to a replay's new job. `seq` orders the timeline (first write order).
 */
export const soniqJobSteps = pgTable(
  "soniq_job_steps",
  {
    jobId: uuid("job_id").notNull(),
    name: text("name").notNull(),
    seq: integer("seq").notNull(),
    kind: text("kind", { enum: JOB_STEP_KINDS }).notNull(),
    state: text("state", { enum: JOB_STEP_STATES }).notNull(),
    value: jsonb("value"),
    error: text("error"),
    attempt: integer("attempt").notNull(),
    startedAt: tstz("started_at"),
    finishedAt: tstz("finished_at"),
    wakeAt: tstz("wake_at"),
  },
  (t) => [
    primaryKey({ name: "soniq_job_steps_pkey", columns: [t.jobId, t.name] }),
    check("soniq_job_steps_kind_check", sql`${t.kind} in (${sql.raw(sqlList(JOB_STEP_KINDS))})`),
    check("soniq_job_steps_state_check", sql`${t.state} in (${sql.raw(sqlList(JOB_STEP_STATES))})`),
  ],
);

/** A job's signal mailbox: buffered until a wait consumes it (oldest first); `key` makes a resend a no-op. */
export const soniqJobSignals = pgTable(
  "soniq_job_signals",
  {
    id: uuid("id").primaryKey(),
    jobId: uuid("job_id").notNull(),
    name: text("name").notNull(),
    payload: jsonb("payload"),
    key: text("key"),
    createdAt: tstz("created_at").notNull().defaultNow(),
    consumedAt: tstz("consumed_at"),
    consumedBy: text("consumed_by"),
  },
  (t) => [
    uniqueIndex("idx_soniq_job_signals_key").on(t.jobId, t.key),
    index("idx_soniq_job_signals_job").on(t.jobId, t.name, t.createdAt),
  ],
);
