/**
 * The hooks a tracing plugin uses, without any tracing library: `producer` around every write of new jobs
 * (what it sends is stored), `onOutcome` once per run, and the trace in explain's evidence. Without a hook
 * nothing is stored.
 */
import { describe, expect, it } from "vitest";
import type { TraceContext } from "../src/common/types.js";
import { PermanentError } from "../src/jobs/outcomes.js";
import { type SendEvent, traceIdOf } from "../src/observability/tracing.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const carrier = (span = "00f067aa0ba902b7"): TraceContext => ({ traceparent: `00-${TRACE}-${span}-01` });

describe("tracing hooks", () => {
  it("trace/off-stores-nothing: without a producer hook a job has no trace", async () => {
    const soniq = app();
    soniq.job("plain.job", async () => null);
    const { id } = await soniq.jobs.enqueue("plain.job", {});
    expect(await soniq.jobs.get(id)).toMatchObject({ traceId: null, traceContext: null });
  });

  it("trace/producer-stores-what-it-sends: enqueue, enqueueMany, replay and a schedule fire each go through it", async () => {
    const soniq = app();
    const events: SendEvent[] = [];
    soniq.use({
      producer: (event, send) => {
        events.push(event);
        return send(carrier());
      },
    });
    const job = soniq.job("traced.job", async () => {
      throw new PermanentError("no");
    });
    const { id } = await soniq.jobs.enqueue("traced.job", { n: 1 });
    expect(await soniq.jobs.get(id)).toMatchObject({ traceId: TRACE, traceContext: carrier() });
    const many = await soniq.jobs.enqueueMany([
      { job, args: { n: 2 } },
      { job, args: { n: 3 } },
    ]);
    for (const r of many) expect((await soniq.jobs.get(r.id))?.traceId).toBe(TRACE);
    await soniq.worker().runOnce();
    const dead = await soniq.deadLetters.get(id);
    expect(dead?.traceContext).toEqual(carrier());
    const replayed = await soniq.deadLetters.replay(id);
    soniq.schedules.declare(job, { every: 3_600_000, name: "hourly" });
    const fired = await soniq.schedules.trigger("hourly");
    expect((await soniq.jobs.get(fired))?.traceId).toBe(TRACE);
    expect(events.map((e) => [e.origin, e.jobs.length, e.links.length])).toEqual([
      ["enqueue", 1, 0],
      ["enqueue", 2, 0],
      ["replay", 1, 1],
      ["schedule", 1, 0],
    ]);
    expect(events[2]?.links).toEqual([carrier()]);
    expect(events[2]?.jobs[0]?.id).toBe(replayed);
  });

  it("trace/replay-without-hook-keeps-the-dead-letter's-trace", async () => {
    const traced = app();
    traced.use({ producer: (_e, send) => send(carrier()) });
    traced.job("kept.job", async () => {
      throw new PermanentError("no");
    });
    const { id } = await traced.jobs.enqueue("kept.job", {});
    await traced.worker().runOnce();
    const plain = app({}, traced.backend);
    plain.job("kept.job", async () => null);
    const newId = await plain.deadLetters.replay(id);
    expect((await plain.jobs.get(newId as string))?.traceContext).toEqual(carrier());
  });

  it("trace/bad-hooks-never-stop-a-write: a throwing hook, one that never sends, an invalid carrier", async () => {
    const soniq = app();
    soniq.job("safe.job", async () => null);
    soniq.use({
      producer: () => {
        throw new Error("tracing broke");
      },
    });
    const { id } = await soniq.jobs.enqueue("safe.job", {});
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", traceContext: null });
    const other = app();
    other.job("safe.job", async () => null);
    other.use({ producer: (_e, send) => send({ traceparent: "garbage" }) });
    const bad = await other.jobs.enqueue("safe.job", {});
    expect((await other.jobs.get(bad.id))?.traceContext).toBeNull();
    const silent = app();
    silent.job("safe.job", async () => null);
    silent.use({ producer: () => undefined });
    const written = await silent.jobs.enqueue("safe.job", {});
    expect((await silent.jobs.get(written.id))?.status).toBe("queued");
  });

  it("trace/on-outcome: once per run with the outcome as DESIGN 16 names it", async () => {
    const soniq = app();
    const seen: [string, number, string][] = [];
    soniq.use({ onOutcome: (ctx, o) => seen.push([ctx.jobName, ctx.attempt, o.outcome]) });
    let calls = 0;
    soniq.job("ok.job", async () => null);
    soniq.job(
      "flaky.job",
      async () => {
        if (++calls === 1) throw new Error("once");
        return null;
      },
      { retry: { delaysMs: [0] } },
    );
    soniq.job("dead.job", async () => {
      throw new PermanentError("never");
    });
    for (const name of ["ok.job", "flaky.job", "dead.job"]) await soniq.jobs.enqueue(name, {});
    const worker = soniq.worker();
    for (let i = 0; i < 10 && seen.length < 4; i++) await worker.runOnce();
    expect(seen.sort()).toEqual([
      ["dead.job", 1, "dead_letter"],
      ["flaky.job", 1, "retry"],
      ["flaky.job", 2, "done"],
      ["ok.job", 1, "done"],
    ]);
  });

  it("trace/explain-evidence: explain names the job's trace, and the dead letter's", async () => {
    const soniq = app();
    soniq.use({ producer: (_e, send) => send(carrier()) });
    soniq.job("explained.job", async () => {
      throw new PermanentError("no");
    });
    const { id } = await soniq.jobs.enqueue("explained.job", {});
    const queued = await soniq.jobs.explain(id);
    expect(queued.reasons.length).toBeGreaterThan(0);
    for (const r of queued.reasons) expect(r.evidence.traceId).toBe(TRACE);
    await soniq.worker().runOnce();
    const dead = await soniq.jobs.explain(id);
    expect(dead.verdict).toBe("dead_lettered");
    expect(dead.reasons[0]?.evidence.traceId).toBe(TRACE);
  });

  it("trace/trace-id-of: a W3C traceparent's trace id; anything else is null", () => {
    expect(traceIdOf(carrier())).toBe(TRACE);
    expect(traceIdOf({ traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` })).toBeNull();
    expect(traceIdOf({ traceparent: "nope" })).toBeNull();
    expect(traceIdOf(null)).toBeNull();
  });
});
