import assert from "node:assert/strict";
import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";

export const subscribeCases = [
  defineCase({
    id: "subscribe/wakes-on-enqueue",
    title: "a subscriber hears the queue name when a job is enqueued on this backend",
    async run(ctx) {
      const heard: string[] = [];
      const unsubscribe = await ctx.backend.wakeUps.subscribe((queue) => heard.push(queue));
      ctx.defer(unsubscribe);
      const queue = ctx.queue();
      await ctx.backend.jobs.enqueue(ctx.newJob({ queue }), {});
      await eventually(
        () =>
          assert.ok(
            heard.includes(queue),
            `no wake-up for "${queue}" yet (heard: ${heard.join(", ") || "nothing"})`,
          ),
        {
          timeoutMs: 5000,
        },
      );
    },
  }),
  defineCase({
    id: "subscribe/unsubscribe-stops-delivery",
    title: "after unsubscribe a listener hears nothing while other listeners still do",
    async run(ctx) {
      const gone: string[] = [];
      const kept: string[] = [];
      const stopGone = await ctx.backend.wakeUps.subscribe((queue) => gone.push(queue));
      const stopKept = await ctx.backend.wakeUps.subscribe((queue) => kept.push(queue));
      ctx.defer(stopKept);
      await stopGone();
      await stopGone();
      const queue = ctx.queue();
      await ctx.backend.jobs.enqueue(ctx.newJob({ queue }), {});
      await eventually(
        () => assert.ok(kept.includes(queue), "the remaining listener has not heard the enqueue yet"),
        {
          timeoutMs: 5000,
        },
      );
      assert.ok(!gone.includes(queue), "an unsubscribed listener must not be called");
    },
  }),
];
