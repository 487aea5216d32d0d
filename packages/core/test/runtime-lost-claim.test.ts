/**
 * A claim lost while its worker runs the job (a Postgres claim commits asynchronously: a database crash or a
 * failover can lose it). The job is queued again and this same worker's next claim takes it at the same
 * attempt. The loss is modelled on the memory backend by undoing the worker's claim (queued, attempt
 * refunded) while its handler runs.
 */
import { describe, expect, it } from "vitest";
import type { Backend, ClaimRequest, RequeueSettlement } from "../src/contract/index.js";
import type { Worker } from "../src/index.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { eventually, gate } from "./support.js";

const app = memoryApps();

/** Puts the running job back to queued with `attempts`, as a database that lost the claim holds it. */
async function loseClaim(backend: Backend<unknown>, worker: Worker, id: string, attempts: number) {
  const undo: RequeueSettlement = {
    kind: "requeue",
    id,
    attempt: 1,
    cause: "snooze",
    attempts,
    delayMs: 0,
    lastError: null,
  };
  expect(await backend.runs.settle([undo], worker.id)).toEqual([true]);
  worker.nudge();
}

/**
 * A worker whose handler records each start and waits for the test to let the first run finish. `wrap` puts
 * something between the worker and the backend (which the test still reaches directly).
 */
async function holdingWorker(wrap: (backend: Backend<unknown>) => Backend<unknown> = (b) => b) {
  const backend = memoryBackend();
  const soniq = app({}, wrap(backend));
  const release = gate();
  const starts: number[] = [];
  const job = soniq.job("lost.claim", async (_args: object, ctx) => {
    starts.push(ctx.attempt);
    if (starts.length === 1) await release.promise;
    return starts.length;
  });
  const { id } = await job.enqueue({});
  const worker = soniq.worker({ concurrency: 2, pollIntervalMs: 10 });
  const done: number[] = [];
  worker.on("job:done", ({ result }) => done.push(result as number));
  await worker.start();
  await eventually(() => expect(starts).toEqual([1]));
  return { backend, soniq, worker, id, starts, done, release };
}

describe("runtime/lost-claim", () => {
  it("runtime/lost-claim-reclaimed-same-attempt: the job is not started again while its first run holds it; that run's done stands", async () => {
    const { backend, soniq, worker, id, starts, done, release } = await holdingWorker();
    await loseClaim(backend, worker, id, 0);
    // The worker claims the job again, at attempt 1: the row is processing under it once more.
    await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("processing"));
    expect(starts).toEqual([1]);
    release.open();
    await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("done"));
    await worker.stop();
    // The first run's done applied to the second claim's row; the parked claim was not run, nor given back.
    expect(starts).toEqual([1]);
    expect(done).toEqual([1]);
    expect((await soniq.jobs.get(id))?.status).toBe("done");
  });

  it("runtime/lost-claim-reclaimed-next-attempt: when the first run's outcome cannot apply, the second claim is given back and the job runs again, after the first", async () => {
    const { backend, soniq, worker, id, starts, done, release } = await holdingWorker();
    // The lost claim is followed by one the database kept the attempt of: the next claim is attempt 2.
    await loseClaim(backend, worker, id, 1);
    await eventually(async () => expect((await soniq.jobs.get(id))?.attempts).toBe(2));
    expect(starts).toEqual([1]);
    release.open();
    await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("done"));
    await worker.stop();
    // The first run's done (attempt 1) did not apply; the parked claim was given back (attempt refunded) and
    // claimed again: the job ran a second time, at attempt 2, after the first run ended.
    expect(starts).toEqual([1, 2]);
    expect(done).toEqual([2]);
    const row = await soniq.jobs.get(id);
    expect(row?.attempts).toBe(2);
    expect(row?.result).toBe(2);
  });

  it("runtime/lost-claim-answer-after-done: a claim whose answer arrives after the held run's done applied to its row does not run the job again", async () => {
    // The claim and the settle travel on different connections: the database can take the job again (same
    // attempt) and then apply the first run's done to that row, while the worker hears the done first and the
    // claim's answer after it. The job is done by then; running what the claim returned would run it again.
    let holdAnswer: Promise<void> | null = null;
    let answered = 0;
    const { backend, soniq, worker, id, starts, done, release } = await holdingWorker((base) =>
      overriding(base, "runs", {
        claim: async (request: ClaimRequest) => {
          const result = await base.runs.claim(request);
          if (holdAnswer && result.jobs.length > 0) await holdAnswer;
          answered++;
          return result;
        },
      }),
    );
    const answer = gate();
    holdAnswer = answer.promise;
    await loseClaim(backend, worker, id, 0);
    // The second claim took the job (processing under the worker again, attempt 1); its answer is held.
    await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("processing"));
    release.open();
    await eventually(() => expect(done).toEqual([1]));
    expect((await soniq.jobs.get(id))?.status).toBe("done");
    const before = answered;
    holdAnswer = null;
    answer.open();
    // Two more claims answered: the worker has taken in the held answer and started what it would run.
    await eventually(() => expect(answered).toBeGreaterThanOrEqual(before + 3));
    await worker.stop();
    expect(starts).toEqual([1]);
    expect(done).toEqual([1]);
    expect((await soniq.jobs.get(id))?.status).toBe("done");
  });
});

describe("runtime/orphans", () => {
  it("runtime/orphan-given-back: a job processing under a live worker that does not hold it is queued again at the next maintenance tick; a held one is not", async () => {
    const backend = memoryBackend();
    const soniq = app({ allowUnknownJobNames: true }, backend);
    const release = gate();
    const starts: string[] = [];
    const job = soniq.job(
      "orphans.held",
      async (_args: object, ctx) => {
        starts.push(ctx.jobId);
        await release.promise;
      },
      { queue: "work" },
    );
    const held = await job.enqueue({});
    const worker = soniq.worker({
      queues: ["work"],
      heartbeatIntervalMs: 100,
      staleAfterMs: 1000,
      pollIntervalMs: 10,
    });
    await worker.start();
    await eventually(() => expect(starts).toEqual([held.id]));
    // A claim made under this worker's id whose result the worker never saw (as when the connection drops
    // after the claim committed): in a queue the worker does not serve, so only the give-back can move it.
    const orphan = await soniq.jobs.enqueue("orphans.lost", {}, { queue: "elsewhere" });
    const claimed = await backend.runs.claim({ queues: ["elsewhere"], limit: 1, workerId: worker.id });
    expect(claimed.jobs.map((j) => j.id)).toEqual([orphan.id]);
    await eventually(async () => expect((await soniq.jobs.get(orphan.id))?.status).toBe("queued"), 5000);
    const row = await soniq.jobs.get(orphan.id);
    expect(row?.attempts).toBe(1);
    expect(row?.workerId).toBeNull();
    // The job the worker holds stayed processing under it, through the same ticks, and ran once.
    expect((await soniq.jobs.get(held.id))?.status).toBe("processing");
    release.open();
    await eventually(async () => expect((await soniq.jobs.get(held.id))?.status).toBe("done"));
    await worker.stop();
    expect(starts).toEqual([held.id]);
  });

  it("runtime/orphan-after-failed-claim: a claim that committed but failed to answer is given back at the worker's next claim, not at a maintenance tick", async () => {
    const backend = memoryBackend();
    let claims = 0;
    let loseNext = false;
    const lossy = overriding(backend, "runs", {
      // Armed: the claim takes its jobs, then the answer is lost (as when the connection drops after the commit).
      claim: async (request: ClaimRequest) => {
        claims++;
        const result = await backend.runs.claim(request);
        if (!loseNext || result.jobs.length === 0) return result;
        loseNext = false;
        throw new Error("connection lost after the claim committed");
      },
    });
    const soniq = app({}, lossy);
    const runs: string[] = [];
    const job = soniq.job("orphans.claim_lost", async (_args: object, ctx) => {
      runs.push(ctx.jobId);
    });
    // Maintenance far away: only the check after the failed claim can give the job back within the test.
    const worker = soniq.worker({
      pollIntervalMs: 10,
      staleAfterMs: 600_000,
      maintenanceIntervalMs: 600_000,
    });
    const errors: string[] = [];
    worker.on("error", ({ during }) => errors.push(during));
    await worker.start();
    await eventually(() => expect(claims).toBeGreaterThanOrEqual(3)); // the start's maintenance pass is over
    loseNext = true;
    const lost = await job.enqueue({});
    await eventually(async () => expect((await soniq.jobs.get(lost.id))?.status).toBe("done"), 5000);
    await worker.stop();
    expect(errors).toContain("claim");
    expect(runs).toEqual([lost.id]);
    // The give-back keeps the lost claim's attempt (it cannot tell a claim nobody ran from a run whose outcome
    // was lost), so the run that did happen is attempt 2.
    expect((await soniq.jobs.get(lost.id))?.attempts).toBe(2);
  });
});
