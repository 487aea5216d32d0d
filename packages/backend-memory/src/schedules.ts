/**
 * The schedules facet: recurring-job declarations and their tick ledger, in process. `recordTick` runs
 * core's tick program (`recordTickSync`) over the store below in one synchronous step (ledger row, job
 * insert, schedule advance), the memory equivalent of the SQL backends' transaction, so concurrent recorders
 * of one tick leave one row and one job. An operator action's audit row is appended in the same step as its
 * change.
 */
import {
  type CatchUpPolicy,
  type EnqueueResult,
  recordTickSync,
  type Schedule,
  type ScheduleDeclaration,
  type SchedulesFacet,
  type ScheduleTick,
  type TickOutcome,
  type TickStore,
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
    recordTick: async (tick, audit) => recordTickSync(tickStore(store, schedules, ledgers), tick, audit),
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

/** The tick program's store over the facet's maps; a synchronous step needs no lock. */
function tickStore(
  store: MemoryStore,
  schedules: Map<string, ScheduleRecord>,
  ledgers: Map<string, Map<number, TickRecordRow>>,
): TickStore {
  return {
    read: (name, tickAt) => {
      const record = schedules.get(name);
      if (record === undefined) return null;
      const row = ledgers.get(name)?.get(tickAt.getTime());
      return {
        schedule: {
          paused: record.paused,
          nextRunAt: dateOrNull(record.nextRunAt),
          lastRunAt: dateOrNull(record.lastRunAt),
          lastJobId: record.lastJobId,
          runCount: record.runCount,
        },
        tick: row === undefined ? null : toTick(row),
      };
    },
    // One job in, one result out.
    enqueue: (job) => enqueueMany(store, [job], undefined)[0] as EnqueueResult,
    record: ({ scheduleName, tick, schedule }) => {
      const record = schedules.get(scheduleName) as ScheduleRecord;
      let ledger = ledgers.get(scheduleName);
      if (ledger === undefined) {
        ledger = new Map();
        ledgers.set(scheduleName, ledger);
      }
      const row: TickRecordRow = { ...tick, tickAt: tick.tickAt.getTime(), recordedAt: store.now() };
      ledger.set(row.tickAt, row);
      record.nextRunAt = schedule.nextRunAt?.getTime() ?? null;
      record.lastRunAt = schedule.lastRunAt?.getTime() ?? null;
      record.lastJobId = schedule.lastJobId;
      record.runCount = schedule.runCount;
      return toTick(row);
    },
    effects: ({ audit, deliveries }) => {
      writeDeliveries(store, deliveries);
      if (audit !== null) writeAudit(store, audit);
    },
  };
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
