/**
 * The `steps` capability (DESIGN.md section 19): checkpoints fenced like a settle, sleeps and signal waits that
 * suspend the job, a buffered signal mailbox with keys, and the dead-letter replay's keep / discard / resolve.
 */
import assert from "node:assert/strict";
import type { Job, StepRef, WaitRequest } from "@soniq/core/backend";
import { auditRecord } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import type { CaseContext } from "../types.js";
import {
  cancelForSetup,
  claimOne,
  deadLetter,
  deepEqual,
  done,
  equal,
  near,
  processingJob,
  registerWorker,
  requeue,
  settleOne,
} from "./helpers.js";

/** A processing job claimed by a registered worker, and its step ref. */
async function running(ctx: CaseContext): Promise<{ job: Job; ref: StepRef; queue: string }> {
  const queue = ctx.queue("steps");
  const workerId = await registerWorker(ctx, queue);
  const job = await processingJob(ctx, { queue }, workerId);
  return { job, ref: { id: job.id, attempt: job.attempts, workerId }, queue };
}

function stepWrite(name: string, value: unknown, state: "done" | "failed" = "done") {
  return {
    name,
    state,
    value: state === "done" ? value : null,
    error: state === "failed" ? String(value) : null,
    startedAt: new Date(),
  };
}

const signalWait = (name: string, timeoutMs: number, signal = name.split("#")[0] as string): WaitRequest => ({
  kind: "signal",
  name,
  signal,
  timeoutMs,
});
const sleepFor = (name: string, delayMs: number): WaitRequest => ({
  kind: "sleep",
  name,
  wakeAt: null,
  delayMs,
});
/** An in-process bound no wait in these cases reaches: the wait answers without suspending. */
const NEVER_SUSPEND = 365 * 86_400_000;

function signal(ctx: CaseContext, jobId: string, name: string, payload: unknown, key: string | null = null) {
  return ctx.backend.steps.signal({ jobId, name, payload, key, id: ctx.id() });
}

const names = async (ctx: CaseContext, id: string) => (await ctx.backend.steps.list(id)).map((s) => s.name);

export const stepCases = [
  defineCase({
    id: "steps/save-fenced",
    title:
      "steps.save writes a checkpoint only for the run that holds the job (processing, its attempt, its worker); list shows it in first-write order",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      equal(await ctx.backend.steps.save(ref, stepWrite("a", { n: 1 })), true, "the run's own save applies");
      equal(await ctx.backend.steps.save(ref, stepWrite("b", [1, "x"])), true, "a second step applies");
      equal(
        await ctx.backend.steps.save({ ...ref, attempt: ref.attempt + 1 }, stepWrite("c", 1)),
        false,
        "a save for another attempt does not apply",
      );
      equal(
        await ctx.backend.steps.save({ ...ref, workerId: ctx.id() }, stepWrite("c", 1)),
        false,
        "a save under another worker does not apply",
      );
      equal(
        await ctx.backend.steps.save(ref, stepWrite("a", { n: 2 })),
        true,
        "a step saved again replaces its value",
      );
      const steps = await ctx.backend.steps.list(job.id);
      deepEqual(
        steps.map((s) => [s.name, s.kind, s.state, s.value, s.attempt]),
        [
          ["a", "step", "done", { n: 2 }, job.attempts],
          ["b", "step", "done", [1, "x"], job.attempts],
        ],
        "list shows both checkpoints in first-write order, the replaced one in its place, nothing of the fenced-out saves",
      );
      assert.ok(steps[0]?.finishedAt instanceof Date, "a done checkpoint has finishedAt");
      await cancelForSetup(ctx, job.id, "the running job");
      equal(
        await ctx.backend.steps.save(ref, stepWrite("d", 1)),
        false,
        "a cancelled job's run saves nothing",
      );
      deepEqual(await names(ctx, job.id), ["a", "b"], "nothing was stored for the cancelled run");
    },
  }),
  defineCase({
    id: "steps/failed-step-error",
    title: "a failed step's checkpoint keeps its last error; a later done save of the name replaces it",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      await ctx.backend.steps.save(ref, stepWrite("charge", "Error: card declined", "failed"));
      let [step] = await ctx.backend.steps.list(job.id);
      deepEqual(
        [step?.state, step?.error, step?.value],
        ["failed", "Error: card declined", null],
        "failed with its error",
      );
      await ctx.backend.steps.save(ref, stepWrite("charge", { id: 7 }));
      [step] = await ctx.backend.steps.list(job.id);
      deepEqual(
        [step?.state, step?.error, step?.value],
        ["done", null, { id: 7 }],
        "done replaces the failure",
      );
    },
  }),
  defineCase({
    id: "steps/concurrent-saves",
    title:
      "saves made at once for several runs (as a worker's concurrent jobs make them) each apply or not by their own fence; a job's checkpoints keep call order and a name saved twice keeps the later value",
    async run(ctx) {
      const runs = await Promise.all([running(ctx), running(ctx), running(ctx), running(ctx)]);
      const [a, b, c, d] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
      await cancelForSetup(ctx, d.job.id, "the fourth running job");
      const answers = await Promise.all([
        ctx.backend.steps.save(a.ref, stepWrite("one", { a: 1 })),
        ctx.backend.steps.save(b.ref, stepWrite("one", "b")),
        ctx.backend.steps.save(a.ref, stepWrite("two", [2])),
        ctx.backend.steps.save({ ...c.ref, attempt: c.ref.attempt + 1 }, stepWrite("one", 1)),
        ctx.backend.steps.save(d.ref, stepWrite("one", 1)),
        ctx.backend.steps.save(b.ref, stepWrite("one", "b2")),
        ctx.backend.steps.save(a.ref, stepWrite("three", "Error: x", "failed")),
        ctx.backend.steps.save(c.ref, stepWrite("one", null)),
      ]);
      deepEqual(
        answers,
        [true, true, true, false, false, true, true, true],
        "each save answers by its own run's fence",
      );
      const listed = async (id: string) =>
        (await ctx.backend.steps.list(id)).map((s) => [s.name, s.state, s.value, s.error]);
      deepEqual(
        await listed(a.job.id),
        [
          ["one", "done", { a: 1 }, null],
          ["two", "done", [2], null],
          ["three", "failed", null, "Error: x"],
        ],
        "a job's checkpoints in call order",
      );
      deepEqual(await listed(b.job.id), [["one", "done", "b2", null]], "the later save of a name wins");
      deepEqual(await listed(c.job.id), [["one", "done", null, null]], "only the run's own save applied");
      deepEqual(await listed(d.job.id), [], "the cancelled job's run saved nothing");
      equal(await ctx.backend.steps.save(a.ref, stepWrite("four", 4)), true, "a later save applies");
      deepEqual(
        (await listed(a.job.id)).map(([name]) => name),
        ["one", "two", "three", "four"],
        "a later step goes after the job's others",
      );
    },
  }),
  defineCase({
    id: "steps/sleep-suspends",
    title:
      "a sleep due later than inProcessMs records a waiting checkpoint and puts the job back to queued, due at the wake time, its attempt given back and its worker cleared",
    async run(ctx) {
      const { job, ref, queue } = await running(ctx);
      const before = Date.now();
      const result = await ctx.backend.steps.wait(ref, sleepFor("nap", 60_000), 1_000);
      assert.ok(
        result.state === "waiting" && result.suspended,
        `the wait suspends, got ${JSON.stringify(result)}`,
      );
      near(result.wakeAt, before + 60_000, 5_000, "the wake time is now plus the delay");
      const row = await ctx.backend.jobs.get(job.id);
      deepEqual(
        [row?.status, row?.attempts, row?.workerId],
        ["queued", job.attempts - 1, null],
        "the job is queued, its attempt given back, no worker",
      );
      near(row?.scheduledAt, result.wakeAt.getTime(), 1, "the job is due at the wake time");
      equal(
        (await ctx.backend.runs.claim({ queues: [queue], limit: 1, workerId: null })).jobs.length,
        0,
        "not claimable before it",
      );
      const [step] = await ctx.backend.steps.list(job.id);
      deepEqual(
        [step?.name, step?.kind, step?.state],
        ["nap", "sleep", "waiting"],
        "a waiting sleep checkpoint",
      );
      near(step?.wakeAt ?? undefined, result.wakeAt.getTime(), 1, "the checkpoint keeps the wake time");
    },
  }),
  defineCase({
    id: "steps/sleep-passed-and-kept",
    title:
      "a sleep whose wake time passed is done; a waiting one keeps its first wake time across calls and attempts (a retry never stretches it)",
    async run(ctx) {
      const { job, ref, queue } = await running(ctx);
      deepEqual(
        await ctx.backend.steps.wait(
          ref,
          { kind: "sleep", name: "past", wakeAt: new Date(Date.now() - 1_000), delayMs: 0 },
          1_000,
        ),
        { state: "done", value: null },
        "sleepUntil an instant that passed is done at once",
      );
      const first = await ctx.backend.steps.wait(ref, sleepFor("long", 60_000), NEVER_SUSPEND);
      assert.ok(
        first.state === "waiting" && !first.suspended,
        "under inProcessMs the wait answers without suspending",
      );
      equal((await ctx.backend.jobs.get(job.id))?.status, "processing", "the job stays with its run");
      await settleOne(ctx, requeue(job), "a retry of the run");
      const again = await claimOne(ctx, queue, ref.workerId);
      const second = await ctx.backend.steps.wait(
        { ...ref, attempt: again.attempts },
        sleepFor("long", 3_600_000),
        NEVER_SUSPEND,
      );
      assert.ok(second.state === "waiting", "still waiting");
      equal(second.wakeAt.getTime(), first.wakeAt.getTime(), "the next attempt keeps the first wake time");
    },
  }),
  defineCase({
    id: "steps/wait-fenced",
    title: "a wait for a run that does not hold the job answers lost and writes nothing",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      deepEqual(
        await ctx.backend.steps.wait({ ...ref, attempt: ref.attempt + 1 }, sleepFor("nap", 60_000), 1_000),
        { state: "lost" },
        "another attempt's wait is lost",
      );
      deepEqual(
        await ctx.backend.steps.wait({ ...ref, workerId: ctx.id() }, signalWait("go", 60_000), 1_000),
        { state: "lost" },
        "another worker's wait is lost",
      );
      deepEqual(await names(ctx, job.id), [], "nothing was written");
      equal((await ctx.backend.jobs.get(job.id))?.status, "processing", "the job was not suspended");
    },
  }),
  defineCase({
    id: "steps/signals-buffered-oldest-first",
    title:
      "signals sent before the wait are kept and consumed oldest first, each by one wait, recorded done with the payload",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      deepEqual(
        await signal(ctx, job.id, "approval", { by: "a" }),
        { outcome: "stored", woke: false, deadLetter: false },
        "stored",
      );
      await signal(ctx, job.id, "approval", { by: "b" });
      await signal(ctx, job.id, "other", 1);
      deepEqual(
        await ctx.backend.steps.wait(ref, signalWait("approval", 60_000), 1_000),
        { state: "done", value: { by: "a" } },
        "the first wait takes the oldest",
      );
      deepEqual(
        await ctx.backend.steps.wait(ref, signalWait("approval#2", 60_000), 1_000),
        { state: "done", value: { by: "b" } },
        "the second occurrence takes the next",
      );
      deepEqual(
        await ctx.backend.steps.wait(ref, signalWait("approval", 60_000), 1_000),
        { state: "done", value: { by: "a" } },
        "asking again answers the stored checkpoint, consuming nothing",
      );
      const third = await ctx.backend.steps.wait(ref, signalWait("approval#3", 60_000), NEVER_SUSPEND);
      equal(third.state, "waiting", "no third approval: the wait waits (the 'other' signal is not its name)");
      const steps = await ctx.backend.steps.list(job.id);
      deepEqual(
        steps.map((s) => [s.name, s.kind, s.state]),
        [
          ["approval", "signal", "done"],
          ["approval#2", "signal", "done"],
          ["approval#3", "signal", "waiting"],
        ],
        "the timeline",
      );
    },
  }),
  defineCase({
    id: "steps/signal-wakes-waiting-job",
    title:
      "a signal to a job suspended on that name makes it due now; its next run consumes the signal; a signal of another name wakes nothing",
    async run(ctx) {
      const { job, ref, queue } = await running(ctx);
      const waited = await ctx.backend.steps.wait(ref, signalWait("approval", 3_600_000), 1_000);
      assert.ok(waited.state === "waiting" && waited.suspended, "the wait suspends the job");
      deepEqual(
        await signal(ctx, job.id, "unrelated", 1),
        { outcome: "stored", woke: false, deadLetter: false },
        "another name wakes nothing",
      );
      equal(
        (await ctx.backend.runs.claim({ queues: [queue], limit: 1, workerId: null })).jobs.length,
        0,
        "still not due",
      );
      deepEqual(
        await signal(ctx, job.id, "approval", { ok: true }),
        { outcome: "stored", woke: true, deadLetter: false },
        "woken",
      );
      const again = await claimOne(ctx, queue, ref.workerId);
      equal(again.id, job.id, "the job is due now");
      deepEqual(
        await ctx.backend.steps.wait(
          { ...ref, attempt: again.attempts },
          signalWait("approval", 3_600_000),
          1_000,
        ),
        { state: "done", value: { ok: true } },
        "the next run's wait consumes the signal",
      );
    },
  }),
  defineCase({
    id: "steps/signal-keys",
    title: "a resend with the same key is a no-op (per job); signals without a key are all stored",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      const other = await running(ctx);
      deepEqual(
        await signal(ctx, job.id, "go", 1, "k1"),
        { outcome: "stored", woke: false, deadLetter: false },
        "first",
      );
      deepEqual(await signal(ctx, job.id, "go", 2, "k1"), { outcome: "duplicate" }, "the resend");
      equal(
        (await signal(ctx, other.job.id, "go", 3, "k1")).outcome,
        "stored",
        "the same key on another job is new",
      );
      await signal(ctx, job.id, "go", 4);
      await signal(ctx, job.id, "go", 5);
      const values: unknown[] = [];
      for (const name of ["go", "go#2", "go#3"]) {
        const r = await ctx.backend.steps.wait(ref, signalWait(name, 60_000), NEVER_SUSPEND);
        values.push(r.state === "done" ? r.value : r.state);
      }
      deepEqual(values, [1, 4, 5], "three signals: the keyed one once, both unkeyed ones");
      equal(
        (await ctx.backend.steps.wait(ref, signalWait("go#4", 60_000), NEVER_SUSPEND)).state,
        "waiting",
        "no fourth",
      );
    },
  }),
  defineCase({
    id: "steps/signal-targets",
    title:
      "a signal to no row is not_found, to a done or cancelled job finished (nothing stored), to a dead letter stored for its replay",
    async run(ctx) {
      deepEqual(await signal(ctx, ctx.id(), "go", 1), { outcome: "not_found" }, "unknown id");
      const a = await running(ctx);
      await settleOne(ctx, done(a.job, "ok"), "finishing the job");
      deepEqual(await signal(ctx, a.job.id, "go", 1), { outcome: "finished", status: "done" }, "done job");
      const b = await running(ctx);
      await cancelForSetup(ctx, b.job.id, "the job");
      deepEqual(
        await signal(ctx, b.job.id, "go", 1),
        { outcome: "finished", status: "cancelled" },
        "cancelled job",
      );
      const c = await running(ctx);
      await settleOne(ctx, deadLetter(c.job), "dead-lettering the job");
      deepEqual(
        await signal(ctx, c.job.id, "go", 1),
        { outcome: "stored", woke: false, deadLetter: true },
        "dead letter",
      );
    },
  }),
  defineCase({
    id: "steps/signal-timeout",
    title:
      "a signal wait whose deadline passed records timed_out and answers it on every later call; a signal arriving after stays for the next wait",
    async run(ctx) {
      const { ref, job } = await running(ctx);
      deepEqual(
        await ctx.backend.steps.wait(ref, signalWait("reply", 0), 1_000),
        { state: "timed_out" },
        "timed out",
      );
      await signal(ctx, job.id, "reply", "late");
      deepEqual(
        await ctx.backend.steps.wait(ref, signalWait("reply", 60_000), 1_000),
        { state: "timed_out" },
        "still timed out",
      );
      deepEqual(
        await ctx.backend.steps.wait(ref, signalWait("reply#2", 60_000), 1_000),
        { state: "done", value: "late" },
        "the late signal is the next wait's",
      );
    },
  }),
  defineCase({
    id: "steps/signal-audited",
    title: "a stored signal writes its audit record in its transaction; a duplicate writes none",
    requires: { declares: ["audit"] },
    async run(ctx) {
      const { job } = await running(ctx);
      const first = auditRecord("job.signal", "ops", job.id, { name: "go" });
      await ctx.backend.steps.signal(
        { jobId: job.id, name: "go", payload: 1, key: "k", id: ctx.id() },
        first,
      );
      const second = auditRecord("job.signal", "ops", job.id, { name: "go" });
      await ctx.backend.steps.signal(
        { jobId: job.id, name: "go", payload: 1, key: "k", id: ctx.id() },
        second,
      );
      const rows = await ctx.backend.audit.list({ action: "job.signal", since: null, limit: 1000 });
      const ids = new Set(rows.map((r) => r.id));
      deepEqual([ids.has(first.id), ids.has(second.id)], [true, false], "only the stored signal is audited");
    },
  }),
  defineCase({
    id: "steps/transaction-fenced",
    title:
      "saveInTransaction stores the function's value fenced, nothing when the function throws or the run lost the job; completeInTransaction completes the job the same way",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      const ok = await ctx.backend.steps.saveInTransaction(
        ref,
        () => 41,
        (v) => stepWrite("tx", v + 1),
      );
      deepEqual(ok, { applied: true, value: 41 }, "applied, with the function's own value");
      deepEqual(
        (await ctx.backend.steps.list(job.id)).map((s) => s.value),
        [42],
        "the written value is stored",
      );
      await assert.rejects(
        ctx.backend.steps.saveInTransaction(
          ref,
          () => {
            throw new Error("boom");
          },
          () => stepWrite("never", 1),
        ),
        /boom/,
        "the function's error propagates",
      );
      const lost = await ctx.backend.steps.saveInTransaction(
        { ...ref, attempt: ref.attempt + 1 },
        () => 1,
        (v) => stepWrite("lost", v),
      );
      equal(lost.applied, false, "a run that does not hold the job stores nothing");
      deepEqual(await names(ctx, job.id), ["tx"], "neither the thrown nor the lost step was stored");
      const wrong = await ctx.backend.steps.completeInTransaction(
        { ...ref, workerId: ctx.id() },
        () => "r",
        (v) => done(job, v),
      );
      equal(wrong.applied, false, "another worker cannot complete the job");
      const completed = await ctx.backend.steps.completeInTransaction(
        ref,
        () => "result",
        (v) => done(job, v),
      );
      equal(completed.applied, true, "the run completes its job");
      const row = await ctx.backend.jobs.get(job.id);
      deepEqual([row?.status, row?.result], ["done", "result"], "done with the result");
    },
  }),
  defineCase({
    id: "steps/replay-keep-discard-resolve",
    title:
      "a dead letter keeps its checkpoints; replay keep moves the done ones to the new job, resolve records steps done, discard starts clean; unconsumed signals move either way",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      await ctx.backend.steps.save(ref, stepWrite("reserve", { seat: 4 }));
      await ctx.backend.steps.save(ref, stepWrite("charge", "Error: declined", "failed"));
      await settleOne(ctx, deadLetter(job), "dead-lettering the job");
      deepEqual(await names(ctx, job.id), ["reserve", "charge"], "the dead letter keeps its checkpoints");
      await signal(ctx, job.id, "approval", { by: "ops" });
      const kept = ctx.id();
      equal(
        await ctx.backend.deadLetters.replay(job.id, {
          newId: kept,
          queue: null,
          priority: null,
          scheduledAt: null,
          traceId: null,
          traceContext: null,
          steps: { keep: true, resolve: [{ name: "charge", value: { paymentId: "manual-1" } }] },
        }),
        kept,
        "replayed",
      );
      const steps = await ctx.backend.steps.list(kept);
      deepEqual(
        steps.map((s) => [s.name, s.state, s.value, s.attempt]),
        [
          ["reserve", "done", { seat: 4 }, job.attempts],
          ["charge", "done", { paymentId: "manual-1" }, 0],
        ],
        "the new job resumes: the done step kept, the failed one resolved by hand",
      );
      const newRun = await claimOne(ctx, job.queue);
      equal(newRun.id, kept, "setup: the replayed job is claimed");
      deepEqual(
        await ctx.backend.steps.wait(
          { id: kept, attempt: newRun.attempts, workerId: null },
          signalWait("approval", 60_000),
          1_000,
        ),
        { state: "done", value: { by: "ops" } },
        "the signal sent to the dead letter moved with the replay",
      );
      const fresh = ctx.id();
      await ctx.backend.deadLetters.replay(job.id, {
        newId: fresh,
        queue: null,
        priority: null,
        scheduledAt: null,
        traceId: null,
        traceContext: null,
        steps: { keep: false, resolve: [] },
      });
      deepEqual(await names(ctx, fresh), [], "discard: the second new job starts clean");
    },
  }),
  defineCase({
    id: "steps/purge-deletes",
    title: "purging a dead letter deletes its checkpoints and signals",
    async run(ctx) {
      const { job, ref } = await running(ctx);
      await ctx.backend.steps.save(ref, stepWrite("a", 1));
      await settleOne(ctx, deadLetter(job), "dead-lettering the job");
      await signal(ctx, job.id, "go", 1);
      equal(await ctx.backend.deadLetters.purge(job.id), true, "purged");
      deepEqual(await names(ctx, job.id), [], "no checkpoint is left");
      // Signals have no list of their own: a replay of a row with the same id cannot happen, so check the mailbox
      // through a job that reuses nothing: a signal to the purged id is not_found.
      deepEqual(
        await signal(ctx, job.id, "go", 2),
        { outcome: "not_found" },
        "the id names nothing any more",
      );
    },
  }),
];
