import { describe, expect, it } from "vitest";
import type { AuditRecord, NewJob, ScheduleTick, TickRecord } from "../src/backend.js";
import {
  type AsyncTickStore,
  type LedgerHead,
  recordTickAsync,
  recordTickSync,
  type TickEffects,
  type TickStore,
  type TickWrite,
} from "../src/backend.js";

const at = (s: string) => new Date(s);
const job = { id: "job-1" } as NewJob;
const recordedAt = at("2026-01-01T00:00:30Z");

/** A store over plain values, which keeps every call it receives. */
function fakeStore(head: LedgerHead | null, existing: ScheduleTick | null = null, deduplicated = false) {
  const calls = { enqueued: [] as NewJob[], records: [] as TickWrite[], effects: [] as TickEffects[] };
  const store: TickStore = {
    read: () => (head === null ? null : { schedule: head, tick: existing }),
    enqueue: (j) => {
      calls.enqueued.push(j);
      return { id: deduplicated ? "job-0" : j.id, deduplicated };
    },
    record: (write) => {
      calls.records.push(write);
      return { ...write.tick, recordedAt };
    },
    effects: (effects) => {
      calls.effects.push(effects);
    },
  };
  return { store, calls };
}

const head = (over: Partial<LedgerHead> = {}): LedgerHead => ({
  paused: false,
  nextRunAt: at("2026-01-01T00:01:00Z"),
  lastRunAt: null,
  lastJobId: null,
  runCount: 4,
  ...over,
});

const fired = (over: Partial<TickRecord> = {}): TickRecord => ({
  scheduleName: "s",
  tickAt: at("2026-01-01T00:01:00Z"),
  outcome: "fired",
  reason: null,
  job,
  nextRunAt: at("2026-01-01T00:02:00Z"),
  manual: false,
  ...over,
});

const trigger = { id: "a1", action: "schedule.trigger", details: { by: "me" } } as unknown as AuditRecord;

describe("schedules/ledger: recordTick's program", () => {
  it("schedules/ledger-fired: a fired tick enqueues, records fired, advances next and last run", () => {
    const { store, calls } = fakeStore(head());
    const result = recordTickSync(store, fired());
    expect(result).toEqual({
      status: "recorded",
      tick: {
        tickAt: at("2026-01-01T00:01:00Z"),
        outcome: "fired",
        jobId: "job-1",
        reason: null,
        recordedAt,
      },
    });
    expect(calls.enqueued).toEqual([job]);
    expect(calls.records[0]?.schedule).toEqual({
      nextRunAt: at("2026-01-01T00:02:00Z"),
      lastRunAt: at("2026-01-01T00:01:00Z"),
      lastJobId: "job-1",
      runCount: 5,
    });
    expect(calls.effects).toEqual([]);
  });

  it("schedules/ledger-no-schedule: nothing is written", () => {
    const { store, calls } = fakeStore(null);
    expect(recordTickSync(store, fired(), trigger)).toEqual({ status: "no_schedule" });
    expect(calls).toEqual({ enqueued: [], records: [], effects: [] });
  });

  it("schedules/ledger-duplicate: nothing changes; a trigger's audit names the existing row's job", () => {
    const existing: ScheduleTick = {
      tickAt: at("2026-01-01T00:01:00Z"),
      outcome: "fired",
      jobId: "job-9",
      reason: null,
      recordedAt,
    };
    const { store, calls } = fakeStore(head(), existing);
    const result = recordTickSync(store, fired({ manual: true, deliveries: [] }), trigger);
    expect(result).toEqual({ status: "duplicate", tick: existing });
    expect(calls.enqueued).toEqual([]);
    expect(calls.records).toEqual([]);
    expect(calls.effects).toEqual([
      { audit: { ...trigger, details: { by: "me", jobId: "job-9" } }, deliveries: [] },
    ]);
  });

  it("schedules/ledger-paused: a paused schedule's fired tick is skipped (paused) without a job; a manual one fires", () => {
    const paused = fakeStore(head({ paused: true, lastJobId: "old", lastRunAt: at("2025-12-31T00:00:00Z") }));
    const skipped = recordTickSync(paused.store, fired(), trigger);
    expect(skipped.status === "recorded" && skipped.tick).toMatchObject({
      outcome: "skipped",
      reason: "paused",
    });
    expect(paused.calls.enqueued).toEqual([]);
    expect(paused.calls.records[0]?.schedule).toMatchObject({ lastJobId: "old", runCount: 4 });
    expect(paused.calls.effects).toEqual([]);
    const manual = fakeStore(head({ paused: true }));
    const firedManually = recordTickSync(manual.store, fired({ manual: true, nextRunAt: null }), trigger);
    expect(firedManually.status === "recorded" && firedManually.tick.outcome).toBe("fired");
    expect(manual.calls.records[0]?.schedule.nextRunAt).toEqual(at("2026-01-01T00:01:00Z"));
    expect(manual.calls.effects).toEqual([
      { audit: { ...trigger, details: { by: "me", jobId: "job-1" } }, deliveries: [] },
    ]);
  });

  it("schedules/ledger-deduplicated: a deduplicated enqueue records deduplicated with the existing job", () => {
    const { store } = fakeStore(head(), null, true);
    const result = recordTickSync(store, fired());
    expect(result.status === "recorded" && result.tick).toMatchObject({
      outcome: "deduplicated",
      jobId: "job-0",
    });
  });

  it("schedules/ledger-next-never-backwards: next fire only moves forward; a missed tick carries its deliveries", async () => {
    const { store, calls } = fakeStore(head({ nextRunAt: at("2026-01-01T00:05:00Z") }));
    const delivery = { id: "d1" } as unknown as TickEffects["deliveries"][number];
    const asyncStore: AsyncTickStore = {
      read: async (...a) => store.read(...a),
      enqueue: async (...a) => store.enqueue(...a),
      record: async (...a) => store.record(...a),
      effects: async (...a) => store.effects(...a),
    };
    const result = await recordTickAsync(
      asyncStore,
      fired({ outcome: "missed", job: null, reason: "not running", deliveries: [delivery] }),
    );
    expect(result.status === "recorded" && result.tick).toMatchObject({ outcome: "missed", jobId: null });
    expect(calls.records[0]?.schedule.nextRunAt).toEqual(at("2026-01-01T00:05:00Z"));
    expect(calls.effects).toEqual([{ audit: null, deliveries: [delivery] }]);
  });
});
