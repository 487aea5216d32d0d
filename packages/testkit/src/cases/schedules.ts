import type { GuardedBackend, ScheduleDeclaration, TickRecord } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { deepEqual, equal } from "./helpers.js";

const T = (iso: string) => new Date(iso);

/** A declaration with a name no other case uses: every minute, first tick at 00:01. */
function declaration(ctx: CaseContext, overrides: Partial<ScheduleDeclaration> = {}): ScheduleDeclaration {
  return {
    name: `conformance.sched_${ctx.id().slice(0, 8)}`,
    jobName: "conformance.job",
    cron: "* * * * *",
    every: null,
    timezone: "UTC",
    args: { n: 1 },
    queue: ctx.queue("s"),
    priority: 100,
    maxAttempts: 3,
    catchUp: "latest",
    nextRunAt: T("2026-01-01T00:01:00Z"),
    ...overrides,
  };
}

export function fired(
  ctx: CaseContext,
  d: ScheduleDeclaration,
  tickAt: Date,
  overrides: Partial<TickRecord> = {},
): TickRecord {
  return {
    scheduleName: d.name,
    tickAt,
    outcome: "fired",
    reason: null,
    job: ctx.newJob({ jobName: d.jobName, queue: d.queue ?? undefined, args: d.args }),
    nextRunAt: new Date(tickAt.getTime() + 60_000),
    manual: false,
    ...overrides,
  };
}

export async function declared(
  ctx: CaseContext,
  overrides: Partial<ScheduleDeclaration> = {},
): Promise<ScheduleDeclaration> {
  const d = declaration(ctx, overrides);
  await ctx.backend.schedules.upsert([d]);
  return d;
}

/** Record one tick from several recorders at once; exactly one must write it. */
async function raceOneTick(ctx: CaseContext, recorders: readonly GuardedBackend<unknown>[]): Promise<void> {
  const d = await declared(ctx);
  const tickAt = T("2026-01-01T00:01:00Z");
  const ticks = recorders.map(() => fired(ctx, d, tickAt));
  const results = await Promise.all(
    ticks.map((t, i) => (recorders[i] as GuardedBackend<unknown>).schedules.recordTick(t)),
  );
  equal(
    results.filter((r) => r.status === "recorded").length,
    1,
    `of ${ticks.length} concurrent recorders of one tick exactly one must record it`,
  );
  equal(
    results.filter((r) => r.status === "duplicate").length,
    ticks.length - 1,
    "the other recorders must get status duplicate",
  );
  const winner = results.find((r) => r.status === "recorded");
  const jobId = winner?.status === "recorded" ? winner.tick.jobId : null;
  for (const r of results) {
    if (r.status === "duplicate")
      equal(r.tick.jobId, jobId, "a duplicate must report the recorded row's job id");
  }
  const history = await ctx.backend.schedules.history(d.name, { limit: 10 });
  equal(history.length, 1, "the ledger must hold one row for the tick");
  const made = await Promise.all(ticks.map((t) => ctx.backend.jobs.get(t.job?.id ?? "")));
  equal(made.filter((j) => j !== null).length, 1, "exactly one of the racing recorders' jobs must exist");
  equal(made.find((j) => j !== null)?.id, jobId, "the existing job must be the one the ledger names");
}

export const scheduleCases = [
  defineCase({
    id: "schedules/args-of-every-json-kind",
    title:
      "a schedule's args of every JSON kind (null included) read back as declared, and its fired job carries them",
    async run(ctx) {
      const kinds: unknown[] = [null, "text", 0, false, [null, 1], { a: null }];
      for (const args of kinds) {
        const d = await declared(ctx, { args });
        deepEqual(
          (await ctx.backend.schedules.get(d.name))?.args,
          args,
          `schedule args ${JSON.stringify(args)}`,
        );
        const tick = fired(ctx, d, T("2026-01-01T00:01:00Z"));
        await ctx.backend.schedules.recordTick(tick);
        deepEqual(
          (await ctx.backend.jobs.get(tick.job?.id ?? ""))?.args,
          args,
          `the fired job's args ${JSON.stringify(args)}`,
        );
      }
    },
  }),
  defineCase({
    id: "schedules/upsert-keeps-next-fire",
    title:
      "upsert of an unchanged timing keeps next fire, pause and last run; a changed timing takes the new first tick",
    async run(ctx) {
      const d = await declared(ctx);
      await ctx.backend.schedules.recordTick(fired(ctx, d, T("2026-01-01T00:01:00Z")));
      equal(
        await ctx.backend.schedules.setPaused(d.name, true),
        true,
        "setPaused of a schedule must return true",
      );
      await ctx.backend.schedules.upsert([
        { ...d, args: { n: 2 }, priority: 5, nextRunAt: T("2026-06-01T00:00:00Z") },
      ]);
      const kept = await ctx.backend.schedules.get(d.name);
      deepEqual(kept?.nextRunAt, T("2026-01-01T00:02:00Z"), "an unchanged timing must keep next_run_at");
      equal(kept?.paused, true, "upsert must keep a pause");
      deepEqual(kept?.lastRunAt, T("2026-01-01T00:01:00Z"), "upsert must keep last_run_at");
      deepEqual(kept?.args, { n: 2 }, "upsert must store the new args");
      equal(kept?.priority, 5, "upsert must store the new priority");
      await ctx.backend.schedules.upsert([
        { ...d, cron: "*/5 * * * *", nextRunAt: T("2026-01-01T00:05:00Z") },
      ]);
      const retimed = await ctx.backend.schedules.get(d.name);
      deepEqual(
        retimed?.nextRunAt,
        T("2026-01-01T00:05:00Z"),
        "a changed cron must take the declaration's nextRunAt",
      );
      equal(retimed?.cron, "*/5 * * * *", "the new cron must be stored");
      await ctx.backend.schedules.upsert([
        { ...d, cron: "*/5 * * * *", timezone: "Europe/Berlin", nextRunAt: T("2026-01-01T00:10:00Z") },
      ]);
      deepEqual(
        (await ctx.backend.schedules.get(d.name))?.nextRunAt,
        T("2026-01-01T00:10:00Z"),
        "a changed timezone must re-time too",
      );
      const every = declaration(ctx, {
        cron: null,
        every: 900_000,
        timezone: null,
        catchUp: { withinMs: 60_000 },
      });
      await ctx.backend.schedules.upsert([every]);
      const row = await ctx.backend.schedules.get(every.name);
      deepEqual(
        row && {
          cron: row.cron,
          every: row.every,
          timezone: row.timezone,
          catchUp: row.catchUp,
          paused: row.paused,
          lastJobId: row.lastJobId,
        },
        {
          cron: null,
          every: 900_000,
          timezone: null,
          catchUp: { withinMs: 60_000 },
          paused: false,
          lastJobId: null,
        },
        "an interval schedule must read back as stored",
      );
    },
  }),
  defineCase({
    id: "schedules/record-tick",
    title:
      "recordTick writes the ledger row and the job together, advances next fire (never backwards) and last run",
    async run(ctx) {
      const d = await declared(ctx);
      const first = fired(ctx, d, T("2026-01-01T00:01:00Z"));
      const result = await ctx.backend.schedules.recordTick(first);
      equal(result.status, "recorded", "a new tick must be recorded");
      const tick = result.status === "recorded" ? result.tick : null;
      deepEqual(
        tick && { tickAt: tick.tickAt, outcome: tick.outcome, jobId: tick.jobId, reason: tick.reason },
        {
          tickAt: first.tickAt,
          outcome: "fired",
          jobId: first.job?.id,
          reason: null,
        },
        "the recorded row must be the tick as sent, with its job",
      );
      equal(
        (await ctx.backend.jobs.get(first.job?.id ?? ""))?.status,
        "queued",
        "a fired tick's job must be queued",
      );
      const row = await ctx.backend.schedules.get(d.name);
      deepEqual(
        row && { nextRunAt: row.nextRunAt, lastRunAt: row.lastRunAt, lastJobId: row.lastJobId },
        { nextRunAt: T("2026-01-01T00:02:00Z"), lastRunAt: first.tickAt, lastJobId: first.job?.id },
        "a fired tick must advance next_run_at and set last_run_at and last_job_id",
      );
      await ctx.backend.schedules.recordTick(
        fired(ctx, d, T("2026-01-01T00:00:30Z"), {
          outcome: "missed",
          reason: "superseded",
          job: null,
          nextRunAt: T("2026-01-01T00:01:00Z"),
        }),
      );
      deepEqual(
        (await ctx.backend.schedules.get(d.name))?.nextRunAt,
        T("2026-01-01T00:02:00Z"),
        "next_run_at must never move backwards",
      );
      const history = await ctx.backend.schedules.history(d.name, { limit: 10 });
      deepEqual(
        history.map((t) => [t.tickAt, t.outcome, t.reason]),
        [
          [first.tickAt, "fired", null],
          [T("2026-01-01T00:00:30Z"), "missed", "superseded"],
        ],
        "history must list ticks newest first with their outcomes",
      );
      equal(
        (await ctx.backend.schedules.history(d.name, { limit: 1 })).length,
        1,
        "history must honour limit",
      );
      const gone = await ctx.backend.schedules.recordTick(
        fired(ctx, { ...d, name: `${d.name}_none` }, T("2026-01-01T00:01:00Z")),
      );
      equal(
        gone.status,
        "no_schedule",
        "recordTick for a schedule that does not exist must report no_schedule",
      );
    },
  }),
  defineCase({
    id: "schedules/paused-and-manual",
    title:
      "a fired tick of a paused schedule is recorded skipped with no job; a manual one fires and leaves next fire",
    async run(ctx) {
      const d = await declared(ctx);
      await ctx.backend.schedules.setPaused(d.name, true);
      const tick = fired(ctx, d, T("2026-01-01T00:01:00Z"));
      const result = await ctx.backend.schedules.recordTick(tick);
      deepEqual(
        result.status === "recorded" && [result.tick.outcome, result.tick.reason, result.tick.jobId],
        ["skipped", "paused", null],
        "a fired tick of a paused schedule must be recorded skipped (paused)",
      );
      equal(
        await ctx.backend.jobs.get(tick.job?.id ?? ""),
        null,
        "no job may be made for a paused schedule's tick",
      );
      deepEqual(
        (await ctx.backend.schedules.get(d.name))?.nextRunAt,
        T("2026-01-01T00:02:00Z"),
        "a skipped tick must still advance next_run_at",
      );
      const manual = fired(ctx, d, T("2026-01-01T00:01:30Z"), {
        reason: "trigger",
        nextRunAt: null,
        manual: true,
      });
      const triggered = await ctx.backend.schedules.recordTick(manual);
      equal(
        triggered.status === "recorded" && triggered.tick.outcome,
        "fired",
        "a manual tick must fire while paused",
      );
      equal(
        (await ctx.backend.jobs.get(manual.job?.id ?? ""))?.status,
        "queued",
        "the manual tick's job must exist",
      );
      deepEqual(
        (await ctx.backend.schedules.get(d.name))?.nextRunAt,
        T("2026-01-01T00:02:00Z"),
        "nextRunAt null must leave next_run_at",
      );
      equal(
        await ctx.backend.schedules.setPaused(`${d.name}_none`, true),
        false,
        "setPaused of an unknown schedule must return false",
      );
    },
  }),
  defineCase({
    id: "schedules/deduplicated-enqueue",
    title: "a fired tick whose unique job is still queued records deduplicated with the existing job's id",
    async run(ctx) {
      const d = await declared(ctx);
      const unique = { unique: true, argsHash: "hash-1" };
      const first = fired(ctx, d, T("2026-01-01T00:01:00Z"));
      const second = fired(ctx, d, T("2026-01-01T00:02:00Z"));
      await ctx.backend.schedules.recordTick({
        ...first,
        job: { ...(first.job as NonNullable<TickRecord["job"]>), ...unique },
      });
      const result = await ctx.backend.schedules.recordTick({
        ...second,
        job: { ...(second.job as NonNullable<TickRecord["job"]>), ...unique },
      });
      deepEqual(
        result.status === "recorded" && [result.tick.outcome, result.tick.jobId],
        ["deduplicated", first.job?.id],
        "the second tick must be recorded deduplicated, naming the queued job",
      );
    },
  }),
  defineCase({
    id: "schedules/one-row-per-tick",
    title: "five concurrent recorders of one tick leave one ledger row and one job",
    async run(ctx) {
      await raceOneTick(ctx, [ctx.backend, ctx.backend, ctx.backend, ctx.backend, ctx.backend]);
    },
  }),
  defineCase({
    id: "schedules/one-row-per-tick-across-instances",
    title: "concurrent recorders of one tick on two instances leave one ledger row and one job",
    requires: { peer: true, capabilities: { multiProcess: true } },
    async run(ctx) {
      const peer = await ctx.openPeer();
      await raceOneTick(ctx, [ctx.backend, peer, ctx.backend, peer, ctx.backend, peer]);
    },
  }),
  defineCase({
    id: "schedules/seen-by-peer",
    title: "a schedule stored, paused and removed on one instance reads so on another at once",
    requires: { peer: true, capabilities: { multiProcess: true } },
    async run(ctx) {
      const peer = await ctx.openPeer();
      const d = await declared(ctx);
      equal(
        (await peer.schedules.list()).some((s) => s.name === d.name),
        true,
        "the peer's list must include the schedule",
      );
      await ctx.backend.schedules.setPaused(d.name, true);
      equal((await peer.schedules.get(d.name))?.paused, true, "the peer must read the pause");
      await ctx.backend.schedules.recordTick(fired(ctx, d, T("2026-01-01T00:01:00Z")));
      equal((await peer.schedules.history(d.name, { limit: 10 })).length, 1, "the peer must read the ledger");
      equal(await peer.schedules.remove(d.name), true, "remove of a schedule must return true");
      equal(
        await ctx.backend.schedules.get(d.name),
        null,
        "a schedule removed on the peer must be gone here",
      );
      deepEqual(
        await ctx.backend.schedules.history(d.name, { limit: 10 }),
        [],
        "remove must delete the ledger too",
      );
      equal(await ctx.backend.schedules.remove(d.name), false, "a second remove must return false");
    },
  }),
];
