/**
 * Operator actions whose facet method takes an audit record: the row is written with the change (in its
 * transaction, where the backend has one) and only when something changed. Queue controls, which always
 * apply, have theirs in queues.ts.
 */
import { auditRecord } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import { deadLetter, deepEqual, enqueue, equal, settleOne } from "./helpers.js";
import { declared, fired } from "./schedules.js";

const claim = async (ctx: CaseContext, queue: string, limit: number) =>
  (await ctx.backend.runs.claim({ queues: [queue], limit, workerId: null })).jobs;

const allRows = (ctx: CaseContext) => ctx.backend.audit.list({ action: null, since: null, limit: 1000 });

/** Audit rows or records as sorted "action on target (id)" lines, so a failure names the actions, not only ids. */
const lines = (entries: readonly { id: string; action: string; target: string | null }[]) =>
  entries.map((e) => `${e.action} on ${e.target} (${e.id})`).sort();

export const auditCases = [
  defineCase({
    id: "audit/actions-record-with-their-change",
    title:
      "cancel, replay and purge write the audit record they are given with their change, and none when nothing changed",
    async run(ctx) {
      const queue = ctx.queue("audit");
      const actor = `kit-${queue}`;
      const job = await enqueue(ctx, { queue });
      const cancel = auditRecord("job.cancel", actor, job.id, null);
      equal(await ctx.backend.jobs.cancel(job.id, cancel), true, "cancelling a queued job must apply");
      const again = auditRecord("job.cancel", actor, job.id, null);
      equal(await ctx.backend.jobs.cancel(job.id, again), false, "cancelling it again changes nothing");
      const dead = await enqueue(ctx, { queue });
      const [claimed] = await claim(ctx, queue, 1);
      await settleOne(ctx, deadLetter(claimed as { id: string; attempts: number }), "dead-lettering a job");
      const replay = auditRecord("dead_letter.replay", actor, dead.id, null);
      const newId = await ctx.backend.deadLetters.replay(
        dead.id,
        {
          newId: ctx.id(),
          queue: null,
          priority: null,
          scheduledAt: null,
          traceId: null,
          traceContext: null,
        },
        replay,
      );
      equal(typeof newId, "string", "replaying a dead letter must return the new id");
      const purge = auditRecord("dead_letter.purge", actor, dead.id, null);
      equal(await ctx.backend.deadLetters.purge(dead.id, purge), true, "purging the dead letter must apply");
      const purgeAgain = auditRecord("dead_letter.purge", actor, dead.id, null);
      equal(
        await ctx.backend.deadLetters.purge(dead.id, purgeAgain),
        false,
        "purging it again changes nothing",
      );
      const rows = (await allRows(ctx)).filter((r) => r.actor === actor);
      deepEqual(
        lines(rows),
        lines([cancel, replay, purge]),
        "exactly the three applied actions (the first cancel, the replay, the first purge) must have audit rows; " +
          "the repeated cancel and purge changed nothing and must have none",
      );
    },
  }),
  defineCase({
    id: "audit/schedule-actions-record-with-their-change",
    title:
      "setPaused, remove and a manual recordTick write the audit record they are given with their change (a trigger's with its job id), and none when nothing changed",
    async run(ctx) {
      const d = await declared(ctx);
      const actor = `kit-${d.name}`;
      const none = `${d.name}_none`;
      const facet = ctx.backend.schedules;
      const pause = auditRecord("schedule.pause", actor, d.name, null);
      equal(await facet.setPaused(d.name, true, pause), true, "pausing a stored schedule must apply");
      const pauseNone = auditRecord("schedule.pause", actor, none, null);
      equal(
        await facet.setPaused(none, true, pauseNone),
        false,
        "pausing an unknown schedule changes nothing",
      );
      const at = new Date("2026-01-01T00:01:30Z");
      const manual = { reason: "trigger", nextRunAt: null, manual: true };
      const tick = fired(ctx, d, at, manual);
      const trigger = auditRecord("schedule.trigger", actor, d.name, null);
      const result = await facet.recordTick(tick, trigger);
      deepEqual(
        result.status === "recorded" && [result.tick.outcome, result.tick.jobId],
        ["fired", tick.job?.id],
        "a manual tick of a paused schedule must fire",
      );
      const again = auditRecord("schedule.trigger", actor, d.name, null);
      const duplicate = await facet.recordTick(fired(ctx, d, at, manual), again);
      deepEqual(
        duplicate.status === "duplicate" && duplicate.tick.jobId,
        tick.job?.id,
        "a second manual tick at the same instant must be a duplicate naming the first one's job",
      );
      const skipped = await facet.recordTick(
        fired(ctx, d, new Date("2026-01-01T00:02:00Z")),
        auditRecord("schedule.trigger", actor, d.name, null),
      );
      deepEqual(
        skipped.status === "recorded" && skipped.tick.jobId,
        null,
        "a scheduled tick of a paused schedule makes no job",
      );
      const triggerNone = auditRecord("schedule.trigger", actor, none, null);
      const gone = await facet.recordTick(fired(ctx, { ...d, name: none }, at, manual), triggerNone);
      equal(gone.status, "no_schedule", "a manual tick of an unknown schedule must report no_schedule");
      const resume = auditRecord("schedule.resume", actor, d.name, null);
      equal(await facet.setPaused(d.name, false, resume), true, "resuming a stored schedule must apply");
      const remove = auditRecord("schedule.remove", actor, d.name, null);
      equal(await facet.remove(d.name, remove), true, "removing a stored schedule must apply");
      const removeAgain = auditRecord("schedule.remove", actor, d.name, null);
      equal(await facet.remove(d.name, removeAgain), false, "removing it again changes nothing");
      const rows = (await allRows(ctx)).filter((r) => r.actor === actor);
      const written = [pause, trigger, again, resume, remove];
      deepEqual(
        lines(rows),
        lines(written),
        "exactly the applied actions (pause, both manual triggers answered with a job, resume, the first remove) " +
          "must have audit rows; the unknown schedule's pause and trigger, the scheduled tick and the repeated " +
          "remove must have none",
      );
      const row = (id: string) => rows.find((r) => r.id === id);
      const shape = (r: (typeof rows)[number] | undefined) =>
        r && [r.action, r.target, r.params, r.outcome, r.details];
      deepEqual(
        written.map((r) => shape(row(r.id))),
        [
          ["schedule.pause", d.name, null, "ok", null],
          ["schedule.trigger", d.name, null, "ok", { jobId: tick.job?.id }],
          ["schedule.trigger", d.name, null, "ok", { jobId: tick.job?.id }],
          ["schedule.resume", d.name, null, "ok", null],
          ["schedule.remove", d.name, null, "ok", null],
        ],
        "each row must be the record as given; a trigger's details must carry the job id",
      );
    },
  }),
];
