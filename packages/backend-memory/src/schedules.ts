/**
 * The schedules facet: recurring-job declarations and their tick ledger, in process. `recordTick` is one
 * synchronous step (ledger row, job insert, schedule advance), the memory equivalent of the SQL
 * backends' transaction, so concurrent recorders of one tick leave one row and one job. An operator
 * action's audit row is appended in the same step as its change.
 */
import {
  type CatchUpPolicy,
  resolveTick,
  type Schedule,
  type ScheduleDeclaration,
  type SchedulesFacet,
  type ScheduleTick,
  type TickOutcome,
  type TickRecord,
  type TickRecordResult,
  triggerAudit,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { enqueueMany } from "./internal/enqueue.js";
import type { MemoryStore } from "./internal/store.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function schedulesFacet(store: MemoryStore): SchedulesFacet {
  const schedules = new Map<string, ScheduleRecord>();
  const ledgers = new Map<string, Map<number, TickRecordRow>>();
  return {
    upsert: async (declarations) => {
      for (const declaration of declarations) upsert(schedules, declaration, store.now());
    },
    list: async () => [...schedules.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(toSchedule),
    get: async (name) => {
      const record = schedules.get(name);
      return record === undefined ? null : toSchedule(record);
    },
    setPaused: async (name, paused, audit) => {
      const record = schedules.get(name);
      if (record === undefined) return false;
      record.paused = paused;
      if (audit) writeAudit(store, audit);
      return true;
    },
    remove: async (name, audit) => {
      ledgers.delete(name);
      const removed = schedules.delete(name);
      if (removed && audit) writeAudit(store, audit);
      return removed;
    },
    recordTick: async (tick, audit) => {
      const record = schedules.get(tick.scheduleName);
      if (record === undefined) return { status: "no_schedule" };
      let ledger = ledgers.get(record.name);
      if (ledger === undefined) {
        ledger = new Map();
        ledgers.set(record.name, ledger);
      }
      const result = recordTick(store, record, ledger, tick);
      if (result.status === "recorded") writeDeliveries(store, tick.deliveries);
      const row = triggerAudit(audit, result);
      if (row !== null) writeAudit(store, row);
      return result;
    },
    history: async (name, { limit }) => {
      const rows = [...(ledgers.get(name)?.values() ?? [])].sort((a, b) => b.tickAt - a.tickAt);
      return rows.slice(0, limit).map(toTick);
    },
  };
}

function upsert(schedules: Map<string, ScheduleRecord>, d: ScheduleDeclaration, now: number): void {
  const existing = schedules.get(d.name);
  const fields = {
    jobName: d.jobName,
    argsJson: JSON.stringify(d.args),
    queue: d.queue,
    priority: d.priority,
    maxAttempts: d.maxAttempts,
    catchUp: structuredClone(d.catchUp),
  };
  if (existing === undefined) {
    schedules.set(d.name, {
      name: d.name,
      cron: d.cron,
      every: d.every,
      timezone: d.timezone,
      ...fields,
      paused: false,
      nextRunAt: d.nextRunAt?.getTime() ?? null,
      lastRunAt: null,
      lastJobId: null,
      runCount: 0,
      createdAt: now,
    });
    return;
  }
  Object.assign(existing, fields);
  if (existing.cron !== d.cron || existing.every !== d.every || existing.timezone !== d.timezone) {
    Object.assign(existing, { cron: d.cron, every: d.every, timezone: d.timezone });
    existing.nextRunAt = d.nextRunAt?.getTime() ?? null;
  }
}

function recordTick(
  store: MemoryStore,
  record: ScheduleRecord,
  ledger: Map<number, TickRecordRow>,
  tick: TickRecord,
): TickRecordResult {
  const tickAt = tick.tickAt.getTime();
  const existing = ledger.get(tickAt);
  if (existing !== undefined) return { status: "duplicate", tick: toTick(existing) };
  const planned = resolveTick(tick, record.paused);
  let outcome: TickOutcome = planned.outcome;
  const reason = planned.reason;
  let jobId: string | null = null;
  if (planned.job !== null) {
    const [result] = enqueueMany(store, [planned.job], undefined);
    jobId = result?.id ?? null;
    if (result?.deduplicated) outcome = "deduplicated";
    record.lastRunAt = tickAt;
    record.lastJobId = jobId;
    record.runCount++;
  }
  const row: TickRecordRow = { tickAt, outcome, jobId, reason, recordedAt: store.now() };
  ledger.set(tickAt, row);
  const next = tick.nextRunAt?.getTime() ?? null;
  if (next !== null && (record.nextRunAt === null || next > record.nextRunAt)) record.nextRunAt = next;
  return { status: "recorded", tick: toTick(row) };
}

const dateOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

function toSchedule(r: ScheduleRecord): Schedule {
  return {
    name: r.name,
    jobName: r.jobName,
    cron: r.cron,
    every: r.every,
    timezone: r.timezone,
    args: JSON.parse(r.argsJson) as unknown,
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.maxAttempts,
    catchUp: structuredClone(r.catchUp),
    paused: r.paused,
    nextRunAt: dateOrNull(r.nextRunAt),
    lastRunAt: dateOrNull(r.lastRunAt),
    lastJobId: r.lastJobId,
    createdAt: new Date(r.createdAt),
  };
}

function toTick(row: TickRecordRow): ScheduleTick {
  return {
    tickAt: new Date(row.tickAt),
    outcome: row.outcome,
    jobId: row.jobId,
    reason: row.reason,
    recordedAt: new Date(row.recordedAt),
  };
}

interface ScheduleRecord {
  readonly name: string;
  jobName: string;
  cron: string | null;
  every: number | null;
  timezone: string | null;
  argsJson: string;
  queue: string | null;
  priority: number | null;
  maxAttempts: number | null;
  catchUp: CatchUpPolicy;
  paused: boolean;
  nextRunAt: number | null;
  lastRunAt: number | null;
  lastJobId: string | null;
  runCount: number;
  readonly createdAt: number;
}

interface TickRecordRow {
  readonly tickAt: number;
  readonly outcome: TickOutcome;
  readonly jobId: string | null;
  readonly reason: string | null;
  readonly recordedAt: number;
}
