/**
 * How a settle releases a flow step's dependents, read right after each `runs.settle` call (never through a
 * drain, which claims again after every settle and so hides a release the backend only applies on the next
 * claim): a fan-in step waits, with the right `pendingParents`, until its last parent settles, one call each;
 * the release is in storage when the settle returns; and an outcome sent again (a retried settle) counts once.
 * The flows are started through the app API (core builds the steps), their jobs claimed and settled on the
 * backend under test with the `flow` part core's worker sends.
 */
import type { FlowStep } from "@soniq/core";
import type { Job, Settlement } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { type App, app } from "./flow-support.js";
import { claimAll, deadLetter, deepEqual, done, statusOf } from "./helpers.js";

/** A `done` item for a claimed step's job, with the flow part core's worker sends (no `ctx.flow.add`). */
function stepDone(job: Job): Settlement {
  return { ...done(job), flow: { flowId: job.flowId as string, stepRef: job.stepRef as string, add: [] } };
}

function stepDeadLettered(job: Job): Settlement {
  return {
    ...deadLetter(job),
    flow: { flowId: job.flowId as string, stepRef: job.stepRef as string, add: [] },
  };
}

async function step(soniq: App, flowId: string, ref: string): Promise<FlowStep> {
  const flow = await soniq.flows.get(flowId);
  const found = flow?.steps.find((s) => s.ref === ref);
  if (found === undefined) throw new Error(`flows.get(${flowId}) must list step ${ref}`);
  return found;
}

/** The claimed job of each ref: `jobs` holds the flow's root jobs, claimed at once. */
function byRef(jobs: readonly Job[]): Record<string, Job> {
  return Object.fromEntries(jobs.map((j) => [j.stepRef as string, j]));
}

export const flowReleaseCases = [
  defineCase({
    id: "flows/fan-in-waits-for-every-parent",
    title:
      "a fan-in step whose parents settle one call each stays waiting (no job row) with pendingParents counting down, and is released by the last",
    async run(ctx) {
      const { soniq, queue } = app(ctx);
      soniq.job("flow.parent", async () => null);
      soniq.job("flow.child", async () => null);
      const parents = ["p1", "p2", "p3", "p4"];
      const started = await soniq.flows.start({
        steps: {
          ...Object.fromEntries(parents.map((ref) => [ref, { job: "flow.parent" }])),
          child: { job: "flow.child", dependsOn: parents },
        },
      });
      const jobs = byRef(await claimAll(ctx, queue, parents.length));
      const childJob = started.jobs.child as string;
      for (const [i, ref] of parents.entries()) {
        const left = parents.length - i - 1;
        deepEqual(
          await ctx.backend.runs.settle([stepDone(jobs[ref] as Job)]),
          [true],
          `setup: the done of parent ${ref} must apply`,
        );
        const child = await step(soniq, started.id, "child");
        if (left > 0) {
          deepEqual(
            [child.state, child.pendingParents, await statusOf(ctx, childJob)],
            ["waiting", left, null],
            `after parent ${i + 1} of ${parents.length} settled (one call each), the fan-in step must still wait, with pendingParents ${left} and no job row`,
          );
        } else {
          deepEqual(
            [child.state, child.pendingParents, await statusOf(ctx, childJob)],
            ["queued", 0, "queued"],
            "after the last parent settled, the fan-in step must be released: queued, pendingParents 0, its job queued",
          );
        }
      }
    },
  }),
  defineCase({
    id: "flows/release-visible-when-settle-returns",
    title:
      "a dependent released by a settle (a done parent, or a dead-lettered one it runs after) is queued, its job row queued, as soon as runs.settle returns, before any other claim",
    async run(ctx) {
      const { soniq, queue } = app(ctx);
      soniq.job("flow.step", async () => null);
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.step" },
          x: { job: "flow.step" },
          b: { job: "flow.step", dependsOn: ["a"] },
          r: { job: "flow.step", dependsOn: ["x"], onParentFailure: "run" },
        },
      });
      const jobs = byRef(await claimAll(ctx, queue, 2));
      deepEqual(
        await ctx.backend.runs.settle([stepDone(jobs.a as Job)]),
        [true],
        "setup: the done of a must apply",
      );
      const b = await step(soniq, started.id, "b");
      deepEqual(
        [b.state, b.pendingParents, await statusOf(ctx, started.jobs.b as string)],
        ["queued", 0, "queued"],
        "when runs.settle returns, the step whose last parent it settled must be released (queued, its job row queued), not on the next claim",
      );
      deepEqual(
        await ctx.backend.runs.settle([stepDeadLettered(jobs.x as Job)]),
        [true],
        "setup: the dead letter of x must apply",
      );
      const r = await step(soniq, started.id, "r");
      deepEqual(
        [r.state, await statusOf(ctx, started.jobs.r as string)],
        ["queued", "queued"],
        'when runs.settle returns, a "run" step whose parent it dead-lettered must be released (queued, its job row queued)',
      );
      deepEqual(
        (await ctx.backend.jobs.stats({ queue })).queued,
        2,
        "jobs.stats counts the two released jobs as queued right after the settles",
      );
    },
  }),
  defineCase({
    id: "flows/outcome-sent-twice-counts-once",
    title:
      "a step's outcome sent again (in the same call or a retried one) reports false and decrements its dependents' pendingParents once",
    async run(ctx) {
      const { soniq, queue } = app(ctx);
      soniq.job("flow.step", async () => null);
      const started = await soniq.flows.start({
        steps: {
          a: { job: "flow.step" },
          b: { job: "flow.step" },
          c: { job: "flow.step" },
          d: { job: "flow.step", dependsOn: ["a", "b", "c"] },
        },
      });
      const jobs = byRef(await claimAll(ctx, queue, 3));
      const pending = async () => {
        const d = await step(soniq, started.id, "d");
        return [d.state, d.pendingParents, await statusOf(ctx, started.jobs.d as string)];
      };
      const a = stepDone(jobs.a as Job);
      deepEqual(
        await ctx.backend.runs.settle([a, a]),
        [true, false],
        "the same outcome twice in one call: the first applies, the second reports false",
      );
      deepEqual(
        await pending(),
        ["waiting", 2, null],
        "a's outcome sent twice in one call must decrement d's pendingParents once (3 -> 2)",
      );
      deepEqual(await ctx.backend.runs.settle([a]), [false], "a's outcome sent again reports false");
      deepEqual(
        await pending(),
        ["waiting", 2, null],
        "a's outcome retried in a later call must not decrement d's pendingParents again",
      );
      const b = stepDone(jobs.b as Job);
      deepEqual(await ctx.backend.runs.settle([b]), [true], "setup: the done of b must apply");
      deepEqual(await ctx.backend.runs.settle([b]), [false], "b's outcome sent again reports false");
      deepEqual(
        await pending(),
        ["waiting", 1, null],
        "b's retried outcome must not release d while c is pending (pendingParents 1, no job row)",
      );
      deepEqual(
        await ctx.backend.runs.settle([stepDone(jobs.c as Job)]),
        [true],
        "setup: the done of c must apply",
      );
      deepEqual(await pending(), ["queued", 0, "queued"], "c, the last parent, releases d");
    },
  }),
] as const;
