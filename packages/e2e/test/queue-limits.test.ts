/**
 * Queue controls across 4 worker processes (SQLite and Postgres): a paused queue is never claimed from;
 * sampled every 20 ms, processing never exceeds a queue's `concurrency` nor a group's `groupConcurrency`;
 * the claim times of a rate-limited queue never put more than `max` starts in any `perMs` window.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Job, Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pooledPostgresKind } from "../scale/pgbouncer.js";
import { eventually, maxStartsPerWindow, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";

const CHILD = fileURLToPath(new URL("./queue-limits-child.ts", import.meta.url));
const PROCESSES = 4;

function startChild(kind: string, target: string, queues: string[]): Promise<ChildProcess> {
  const child = fork(CHILD, [kind, target, queues.join(",")], {
    execArgv: ["--conditions=source", "--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`child exited early with ${code}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.send("stop");
  });
}

// postgres-pgbouncer: through a private PgBouncer in transaction mode (issue 24; needs Debian's pgbouncer).
describe.each([sqliteKind, postgresKind, pooledPostgresKind].map((make) => [make().name, make] as const))(
  "queues/limits across %s processes",
  (name, make) => {
    const kind = make();
    beforeAll(() => kind.setup(), 30_000);
    afterAll(() => kind.teardown(), 30_000);

    it(`queues/limits-hold-across-${PROCESSES}-processes: pause, concurrency, groupConcurrency and rateLimit`, async () => {
      const soniq = new Soniq({ backend: kind.create() });
      const children: ChildProcess[] = [];
      try {
        await soniq.setup();
        soniq.job("limits.work", async () => null);
        const [paused, conc, grouped, rated] = ["paused", "conc", "grp", "rate"].map(uniqueName) as [
          string,
          string,
          string,
          string,
        ];
        const rate = { max: 4, perMs: 400 };
        // Set up before their first job: queues nothing knows yet, so on purpose ({ create: true }).
        const create = { create: true };
        await soniq.queues.pause(paused, create);
        await soniq.queues.configure(conc, { concurrency: 3 }, create);
        await soniq.queues.configure(grouped, { groupConcurrency: 1 }, create);
        await soniq.queues.configure(rated, { rateLimit: rate }, create);
        const enqueue = (queue: string, n: number, ms: number, group?: (i: number) => string) =>
          soniq.jobs.enqueueMany(
            Array.from({ length: n }, (_, i) => ({
              job: "limits.work",
              args: { ms },
              options: group ? { queue, group: group(i) } : { queue },
            })),
          );
        // The workers start first, so all 4 are claiming when the jobs arrive.
        const queues = [paused, conc, grouped, rated];
        children.push(
          ...(await Promise.all(
            Array.from({ length: PROCESSES }, () => startChild(name, kind.target(), queues)),
          )),
        );
        await enqueue(paused, 10, 1);
        await enqueue(conc, 24, 40);
        await enqueue(grouped, 24, 40, (i) => `g${i % 4}`);
        await enqueue(rated, 16, 1);

        const processing = (queue: string): Promise<Job[]> =>
          soniq.jobs.list({ queue, status: "processing", limit: 1000 });
        let maxConc = 0;
        let maxGroup = 0;
        let pausedTouched = 0;
        // Sampled until the limited queues drain (each sample is a few reads, ~10-20 ms apart).
        await eventually(async () => {
          const [c, g, p] = await Promise.all([processing(conc), processing(grouped), processing(paused)]);
          maxConc = Math.max(maxConc, c.length);
          const perGroup = new Map<string, number>();
          for (const job of g) perGroup.set(String(job.group), (perGroup.get(String(job.group)) ?? 0) + 1);
          maxGroup = Math.max(maxGroup, ...perGroup.values());
          pausedTouched += p.length;
          const stats = await Promise.all([conc, grouped, rated].map((q) => soniq.jobs.stats({ queue: q })));
          if (stats.some((s) => s.done < s.total)) throw new Error("the limited queues are not drained yet");
        }, 60_000);
        expect(maxConc, "processing in the concurrency-3 queue, at most").toBeLessThanOrEqual(3);
        expect(maxGroup, "processing per group in the groupConcurrency-1 queue, at most").toBe(1);
        expect(maxConc, "the 4 processes together should reach the concurrency cap").toBeGreaterThanOrEqual(
          2,
        );
        expect(pausedTouched, "no job of the paused queue may ever be processing").toBe(0);
        expect(await soniq.jobs.stats({ queue: paused })).toMatchObject({
          queued: 10,
          processing: 0,
          done: 0,
        });

        const done = await soniq.jobs.list({ queue: rated, status: "done", limit: 1000 });
        const times = done.map((j) => (j.result as { claimedAt: number }).claimedAt);
        expect(times).toHaveLength(16);
        // A millisecond of slack: Postgres claims at microseconds, the results carry milliseconds.
        expect(maxStartsPerWindow(times, rate.perMs - 1), "starts in any 400 ms window").toBeLessThanOrEqual(
          rate.max,
        );
        const list = await soniq.queues.list();
        expect(list.find((q) => q.name === paused)).toMatchObject({
          paused: true,
          lagMs: expect.any(Number),
        });
      } finally {
        await Promise.all(children.map(stopChild));
        await soniq.close();
      }
    }, 120_000);
  },
);

describe("queues/resume-wakes-workers on postgres", () => {
  const kind = postgresKind();
  beforeAll(() => kind.setup(), 30_000);
  afterAll(() => kind.teardown(), 30_000);

  it("queues/resume-notifies: a worker polling once a minute runs a resumed queue's job at once (NOTIFY)", async () => {
    const soniq = new Soniq({ backend: kind.create() });
    try {
      await soniq.setup();
      const queue = uniqueName("woken");
      const ran: string[] = [];
      soniq.job(
        "limits.woken",
        async (_args, ctx) => {
          ran.push(ctx.jobId);
        },
        { queue },
      );
      await soniq.queues.pause(queue);
      const { id } = await soniq.jobs.enqueue("limits.woken", {});
      const worker = soniq.worker({ queues: [queue], pollIntervalMs: 60_000 });
      await worker.start();
      // Started (first claim found the queue paused); only a wake-up can bring the job in before a minute.
      await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("queued"), 2_000);
      expect(ran).toEqual([]);
      await soniq.queues.resume(queue);
      await eventually(() => expect(ran).toEqual([id]), 10_000);
    } finally {
      await soniq.close();
    }
  }, 60_000);
});
