/** The durable-step tables of the SQLite schema (re-exported by sqlite.ts; DESIGN.md section 19). */
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { JOB_STEP_KINDS, JOB_STEP_STATES, sqlList } from "./constants.js";
import { json, ms, nowMs } from "./sqlite-columns.js";

/**
 * A job's checkpoints, one row per occurrence name. `job_id` has no foreign key: the rows stay with the job's
 * dead letter (same id) and move to a replay's new job. `seq` orders the timeline (first write order).
 */
export const soniqJobSteps = sqliteTable(
  "soniq_job_steps",
  {
    jobId: text("job_id").notNull(),
    name: text("name").notNull(),
    seq: integer("seq").notNull(),
    kind: text("kind", { enum: JOB_STEP_KINDS }).notNull(),
    state: text("state", { enum: JOB_STEP_STATES }).notNull(),
    value: json<unknown>("value"),
    error: text("error"),
    attempt: integer("attempt").notNull(),
    startedAt: ms("started_at"),
    finishedAt: ms("finished_at"),
    wakeAt: ms("wake_at"),
  },
  (t) => [
    primaryKey({ name: "soniq_job_steps_pkey", columns: [t.jobId, t.name] }),
    check("soniq_job_steps_kind_check", sql`${t.kind} in (${sql.raw(sqlList(JOB_STEP_KINDS))})`),
    check("soniq_job_steps_state_check", sql`${t.state} in (${sql.raw(sqlList(JOB_STEP_STATES))})`),
  ],
);

/** A job's signal mailbox: buffered until a wait consumes it (oldest first); `key` makes a resend a no-op. */
export const soniqJobSignals = sqliteTable(
  "soniq_job_signals",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id").notNull(),
    name: text("name").notNull(),
    payload: json<unknown>("payload"),
    key: text("key"),
    createdAt: ms("created_at").notNull().default(nowMs),
    consumedAt: ms("consumed_at"),
    consumedBy: text("consumed_by"),
  },
  (t) => [
    uniqueIndex("idx_soniq_job_signals_key").on(t.jobId, t.key),
    index("idx_soniq_job_signals_job").on(t.jobId, t.name, t.createdAt),
  ],
);
