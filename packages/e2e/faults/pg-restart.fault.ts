/**
 * A PostgreSQL restart mid-drain, on a private throwaway server (private-postgres.ts), never the shared
 * one: every job ends done exactly once, none lost, none left processing, none run again after its done.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type PrivatePostgres, startPrivatePostgres } from "./private-postgres.js";
import { eventually, expectSettled, figure, printFigures, size } from "./support.js";

let server: PrivatePostgres | undefined;
beforeAll(async () => {
  server = await startPrivatePostgres();
}, 60_000);
afterAll(() => {
  printFigures();
  server?.stop();
});

it("faults/pg-restart-mid-drain: the server restarts during a drain; nothing lost, stuck or run again after done", async () => {
  const total = size(10_000, 2000);
  const t0 = performance.now();
  const soniq = new Soniq({
    backend: postgresBackend({ connectionString: (server as PrivatePostgres).url }),
  });
  const starts = new Map<string, number>();
  const done = new Set<string>();
  const rerunAfterDone: string[] = [];
  try {
    await soniq.setup();
    const queue = "restart";
    const job = soniq.job(
      "fault.work",
      async (_args, ctx) => {
        starts.set(ctx.jobId, (starts.get(ctx.jobId) ?? 0) + 1);
        if (done.has(ctx.jobId)) rerunAfterDone.push(ctx.jobId);
        return 1;
      },
      { queue },
    );
    const ids: string[] = [];
    for (let i = 0; i < total; i += 500) {
      const items = Array.from({ length: Math.min(500, total - i) }, (_, k) => ({ job, args: { i: i + k } }));
      for (const r of await soniq.enqueueMany(items)) ids.push(r.id);
    }
    const worker = soniq.worker({
      queues: [queue],
      concurrency: 20,
      pollIntervalMs: 50,
      heartbeatIntervalMs: 200,
      staleAfterMs: 2000,
    });
    worker.on("job:done", ({ job }) => done.add(job.id));
    const felt: Record<string, number> = {};
    worker.on("error", ({ during }) => {
      felt[during] = (felt[during] ?? 0) + 1;
    });
    await worker.start();
    await eventually(async () => {
      expect((await soniq.getQueueStats({ queue })).done).toBeGreaterThanOrEqual(total * 0.3);
    }, 120_000);
    const r0 = performance.now();
    (server as PrivatePostgres).restart();
    const restartMs = performance.now() - r0;
    await eventually(() => expectSettled(soniq, queue, total), 180_000);
    await worker.stop();
    const stats = await soniq.getQueueStats({ queue });
    const lost = ids.filter((id) => !starts.has(id)).length;
    figure({
      scenario: `PostgreSQL restart mid-drain (private server, restart took ${(restartMs / 1000).toFixed(1)} s; worker errors ${JSON.stringify(felt)})`,
      backend: "postgres",
      size: `${total} jobs`,
      lost,
      "run more than once": [...starts.values()].filter((n) => n > 1).length,
      "rerun after done": rerunAfterDone.length,
      "left processing": stats.processing,
      time: `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    });
    expect(lost).toBe(0);
    expect(stats.done).toBe(total);
    expect(rerunAfterDone).toEqual([]);
  } finally {
    await soniq.close();
  }
});
