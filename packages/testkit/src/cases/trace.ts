import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import { claimOne, deadLetter, deepEqual, enqueue, equal, listJobs, settleOne } from "./helpers.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CARRIER = { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01`, tracestate: "soniq=conformance" };
const REPLAY_TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const REPLAY_CARRIER = { traceparent: `00-${REPLAY_TRACE_ID}-b7ad6b7169203331-01` };

export const traceCases = [
  defineCase({
    id: "trace/stored-and-carried",
    title:
      "a job's trace (trace_id, trace_context) is stored as sent, read by get, list and claim, kept by the dead-letter move; a replay stores the request's",
    async run(ctx) {
      const queue = ctx.queue("trace");
      const job = await enqueue(ctx, { queue, traceId: TRACE_ID, traceContext: CARRIER });
      const plain = await enqueue(ctx, { queue: ctx.queue("plain") });
      const read = await ctx.backend.jobs.get(job.id);
      equal(read?.traceId, TRACE_ID, "jobs.get returns the stored trace id");
      deepEqual(read?.traceContext, CARRIER, "jobs.get returns the stored carrier as sent");
      const untraced = await ctx.backend.jobs.get(plain.id);
      equal(untraced?.traceId, null, "a job enqueued without a trace has traceId null");
      equal(untraced?.traceContext, null, "a job enqueued without a trace has traceContext null");
      const [listed] = await listJobs(ctx, { queue });
      deepEqual(listed?.traceContext, CARRIER, "jobs.list returns the carrier");
      const claimed = await claimOne(ctx, queue);
      equal(claimed.traceId, TRACE_ID, "the claim returns the trace id (the run continues the trace)");
      deepEqual(claimed.traceContext, CARRIER, "the claim returns the carrier");
      await settleOne(ctx, deadLetter(claimed), "dead-lettering the traced job");
      const dead = await ctx.backend.deadLetters.get(job.id);
      assert.ok(dead !== null, "the dead letter must exist");
      equal(dead.traceId, TRACE_ID, "the dead-letter move keeps the trace id");
      deepEqual(dead.traceContext, CARRIER, "the dead-letter move keeps the carrier");
      const request = { queue: null, priority: null, scheduledAt: null };
      const newId = ctx.id();
      await ctx.backend.deadLetters.replay(job.id, {
        ...request,
        newId,
        traceId: REPLAY_TRACE_ID,
        traceContext: REPLAY_CARRIER,
      });
      const replayed = await ctx.backend.jobs.get(newId);
      equal(replayed?.traceId, REPLAY_TRACE_ID, "a replay stores the request's trace id");
      deepEqual(replayed?.traceContext, REPLAY_CARRIER, "a replay stores the request's carrier");
      const bare = ctx.id();
      await ctx.backend.deadLetters.replay(job.id, {
        ...request,
        newId: bare,
        traceId: null,
        traceContext: null,
      });
      equal((await ctx.backend.jobs.get(bare))?.traceContext, null, "a replay without a trace stores null");
    },
  }),
];
