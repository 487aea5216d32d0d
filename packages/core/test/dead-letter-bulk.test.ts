/** deadLetter.replayWhere / purgeWhere on the memory backend: chunked, dry run, one audit row each. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { DeadLetterListQuery, NewJob } from "../src/backend.js";
import { isSoniqError } from "../src/errors.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";

const app = memoryApps();

const newJob = (queue: string): NewJob => ({
  id: randomUUID(),
  jobName: "bulk.job",
  args: {},
  argsHash: null,
  queue,
  priority: 100,
  maxAttempts: 3,
  scheduledAt: null,
  dedupKey: null,
  unique: false,
  producerId: null,
  group: null,
});

/** `n` dead letters in `queue`, straight through the backend. */
async function deadLetters(backend: ReturnType<typeof memoryBackend>, queue: string, n: number) {
  await backend.jobs.enqueueMany(
    Array.from({ length: n }, () => newJob(queue)),
    {},
  );
  const claimed = await backend.runs.claim({ queues: [queue], limit: n, workerId: null });
  await backend.runs.settle(
    claimed.map((j) => ({
      kind: "dead_letter",
      id: j.id,
      attempt: j.attempts,
      reason: "permanent_failure",
      error: null,
      tags: null,
    })),
  );
}

describe("dead-letter/bulk", () => {
  it("dead-letter/bulk-chunked-and-audited: dry run counts, purgeWhere and replayWhere act on every match in pages", async () => {
    const raw = memoryBackend();
    const pages: number[] = [];
    const spied = overriding(raw, "deadLetters", {
      list: (q: DeadLetterListQuery) => {
        pages.push(q.limit);
        return raw.deadLetters.list(q);
      },
    });
    const soniq = app({ allowUnknownJobNames: true }, spied);
    await deadLetters(raw, "big", 1203);
    await deadLetters(raw, "small", 5);

    expect(await soniq.deadLetter.purgeWhere({ queue: "big" }, { dryRun: true, actor: "ops" })).toEqual({
      count: 1203,
      dryRun: true,
    });
    expect(await soniq.getQueueStats({ queue: "big" })).toMatchObject({ dead_letter: 1203 });
    expect(await soniq.deadLetter.purgeWhere({ queue: "big" }, { actor: "ops" })).toEqual({
      count: 1203,
      dryRun: false,
    });
    expect(await soniq.getQueueStats({ queue: "big" })).toMatchObject({ dead_letter: 0 });
    expect(await soniq.getQueueStats({ queue: "small" })).toMatchObject({ dead_letter: 5 });
    expect(Math.max(...pages)).toBeLessThanOrEqual(500);

    expect(await soniq.deadLetter.replayWhere({ queue: "small" }, { priority: 1 })).toEqual({
      count: 5,
      dryRun: false,
    });
    const replayed = await soniq.listJobs({ queue: "small", status: "queued" });
    expect(replayed.map((j) => j.priority)).toEqual([1, 1, 1, 1, 1]);

    const rows = await soniq.audit.list();
    expect(rows.map((r) => [r.action, r.actor, r.outcome, r.details])).toEqual([
      ["dead_letter.replay_where", "api", "ok", { count: 5 }],
      ["dead_letter.purge_where", "ops", "ok", { count: 1203 }],
      ["dead_letter.purge_where", "ops", "dry_run", { count: 1203 }],
    ]);
    expect(rows[0]?.params).toMatchObject({ queue: "small", dryRun: false });
  });

  it("dead-letter/bulk-bad-input: paging keys, bad filters and options are rejected, nothing written", async () => {
    const soniq = app();
    for (const call of [
      () => soniq.deadLetter.purgeWhere({ limit: 5 } as never),
      () => soniq.deadLetter.purgeWhere({ queue: "" }),
      () => soniq.deadLetter.replayWhere({}, { dryRun: "yes" as never }),
      () => soniq.deadLetter.replayWhere({}, { priority: 1.5 }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT") || isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(
        true,
      );
    }
    expect(await soniq.audit.list()).toEqual([]);
  });
});
