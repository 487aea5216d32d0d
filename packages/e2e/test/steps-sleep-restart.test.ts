/**
 * Sleeps across a worker restart (issue 40 item 8): 10 jobs run a step, then `ctx.sleep("nap", 1500)`, which
 * puts each back to `queued` due at its wake time (no slot held, the attempt given back). The worker process that
 * ran them is stopped gracefully (a worker of this process), or SIGKILLed (a child process, then recovered as
 * stale), while they sleep; a new worker process, started before the wake times, picks them up only once they are due and finishes them. The step before
 * the sleep ran once per job, the code after it once, never before the wake time. SQL backends only.
 */
import { appendFileSync } from "node:fs";
import { Soniq, type Worker } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";
import { type Child, killAll, readEffects, startChild, tempDir } from "./steps-support.js";

const JOBS = 10;
const SLEEP_MS = 1500;

/** The child's `sleeper` handler (steps-child-worker.ts) on a worker of this process. */
function localSleeper(soniq: Soniq, queue: string, effects: string): Worker {
  const effect = (record: Record<string, unknown>) =>
    appendFileSync(effects, `${JSON.stringify({ ...record, pid: process.pid, at: Date.now() })}\n`);
  soniq.job(
    "steps.nap",
    async (_args: Record<string, never>, ctx) => {
      await ctx.step("before", () => {
        effect({ job: ctx.jobId, step: "before", attempt: ctx.attempt });
        return process.pid;
      });
      await ctx.sleep("nap", SLEEP_MS);
      effect({ job: ctx.jobId, step: "after", attempt: ctx.attempt });
      return { resumedBy: process.pid };
    },
    { queue },
  );
  return soniq.worker({ queues: [queue], concurrency: JOBS, pollIntervalMs: 50, heartbeatIntervalMs: 100 });
}

describe.each(
  [sqliteKind, postgresKind].map((make) => [make().name as "sqlite" | "postgres", make] as const),
)("steps/sleep-restart on %s", (name, make) => {
  const kind = make();
  const dir = tempDir();
  beforeAll(() => kind.setup(), 30_000);
  afterAll(async () => {
    dir.remove();
    await kind.teardown();
  }, 30_000);

  it.each([
    ["stopped", "stopped gracefully"],
    ["killed", "SIGKILLed"],
  ] as const)(
    "steps/sleep-across-restart (%s): jobs sleeping 1.5 s while their worker is %s are finished by a new worker process after the wake time; the step before the sleep ran once",
    async (how, _what) => {
      const queue = uniqueName("q");
      const soniq = new Soniq({ backend: kind.create(), allowUnknownJobNames: true });
      let local: Worker | undefined;
      const children: Child[] = [];
      try {
        await soniq.setup();
        const effects = dir.path(`${queue}.effects`);
        const config = { effects, sleepMs: SLEEP_MS, concurrency: JOBS };
        // The worker that is stopped runs in this process; the one SIGKILLed in a child of its own.
        const [first, second] = await Promise.all([
          how === "killed" ? startChild(name, kind.target(), queue, "sleeper", config) : undefined,
          startChild(name, kind.target(), queue, "sleeper", { ...config, startOn: "message" }),
        ]);
        if (first) children.push(first);
        children.push(second);
        local = first ? undefined : localSleeper(soniq, queue, effects);
        if (local) await local.start();
        const firstWorker = first ? (first.messages.find((m) => m.ready)?.ready as string) : local?.id;
        const firstPid = first ? first.process.pid : process.pid;

        const handles = await soniq.jobs.enqueueMany(
          Array.from({ length: JOBS }, () => ({ job: "steps.nap", args: {}, options: { queue } })),
        );
        const ids = handles.map((h) => h.id);
        const sleeping = async () => {
          const [jobs, steps] = await Promise.all([
            Promise.all(ids.map((id) => soniq.jobs.get(id))),
            Promise.all(ids.map((id) => soniq.jobs.steps(id))),
          ]);
          for (const [i, job] of jobs.entries()) {
            expect(job).toMatchObject({ status: "queued", attempts: 0, workerId: null });
            const nap = steps[i]?.find((s) => s.name === "nap");
            expect(steps[i]?.map((s) => [s.name, s.state])).toEqual([
              ["before", "done"],
              ["nap", "waiting"],
            ]);
            expect(job?.scheduledAt.getTime()).toBe(nap?.wakeAt?.getTime());
          }
          return steps.map((s) => s.find((x) => x.name === "nap")?.wakeAt?.getTime() as number);
        };
        // Every job is suspended (queued, due at its wake time): the first worker holds none of them.
        const wakeAts = await eventually(sleeping, 10_000);

        if (local) {
          await local.stop();
        } else {
          await first?.kill();
          // The dead worker is recovered as stale meanwhile: no sleeping job is touched.
          const recovered = await eventually(async () => {
            const r = await soniq.backend.workers.recoverStale(300);
            expect(r.workerIds).toContain(firstWorker);
            return r;
          }, 10_000);
          expect(recovered.requeuedJobIds).toEqual([]);
        }
        expect(await sleeping()).toEqual(wakeAts);
        const workers = await soniq.backend.workers.list();
        expect(workers.find((w) => w.id === firstWorker)?.status).toBe("stopped");

        second.send({ start: true });
        await second.next((m) => m.started !== undefined);
        await eventually(async () => {
          expect((await soniq.jobs.stats({ queue })).done).toBe(JOBS);
        }, 20_000);

        const all = readEffects(effects);
        for (const [i, id] of ids.entries()) {
          const mine = all.filter((e) => e.job === id);
          // The step before the sleep once, by the first worker; the code after it once, by the second,
          // not before the wake time (this process, the database and the children share one clock).
          expect(mine.map((e) => [e.step, e.attempt, e.pid])).toEqual([
            ["before", 1, firstPid],
            ["after", 1, second.process.pid],
          ]);
          expect(mine[1]?.at).toBeGreaterThanOrEqual(wakeAts[i] as number);
          expect(await soniq.jobs.get(id)).toMatchObject({
            status: "done",
            attempts: 1,
            result: { resumedBy: second.process.pid },
          });
          const steps = await soniq.jobs.steps(id);
          expect(steps.map((s) => [s.name, s.kind, s.state, s.attempt])).toEqual([
            ["before", "step", "done", 1],
            ["nap", "sleep", "done", 1],
          ]);
          expect(steps[1]?.wakeAt?.getTime()).toBe(wakeAts[i]);
        }
      } finally {
        await local?.stop();
        await killAll(children);
        await soniq.close();
      }
    },
    90_000,
  );
});
