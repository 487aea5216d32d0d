/**
 * A keyed batch (jobs with a dedup key or unique) travels as typed column arrays like a plain one
 * (internal/job-columns.ts): each column must land on its own row, keys included, whatever text an array
 * literal could misread, and the keys must still decide duplicates.
 */
import { randomUUID } from "node:crypto";
import type { NewJob } from "@soniq/core/backend";
import { uniqueQueue } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { newJob, useMigratedBackend } from "./pgdb.js";

const fx = useMigratedBackend();

type Shape = Partial<NewJob>;

// Keys and columns an array literal could misread: NULL, an empty string, braces, commas, quotes, backslashes.
const SHAPES: Shape[] = [
  { dedupKey: "NULL", args: null },
  { dedupKey: "", args: 'text with "quotes", a \\ and ünïcödé', priority: 7 },
  { dedupKey: '{a,b} "q" \\', args: [1, { nested: [true, null] }], group: "g-1" },
  { unique: true, argsHash: "NULL", args: { "{,}": "x" }, producerId: "\\", maxAttempts: 9 },
  { unique: true, argsHash: '", {}', args: 42, traceId: "", traceContext: { traceparent: "00-a-b-01" } },
  { unique: true, argsHash: "both", dedupKey: ",", jobName: 'shape "other", {x}', args: {} },
  { args: { plain: true }, group: ",", scheduledAt: new Date(Date.now() + 3_600_000) },
];

/** Each side gets its own keys (a prefix), so the two sides cannot deduplicate against each other. */
function keyed(queue: string, side: string, shape: Shape) {
  return newJob({
    queue,
    ...shape,
    ...(shape.dedupKey !== undefined ? { dedupKey: `${side}${shape.dedupKey}` } : {}),
    ...(shape.argsHash !== undefined ? { argsHash: `${side}${shape.argsHash}` } : {}),
  });
}

describe("a keyed batch", () => {
  it("stores each row as a single enqueue of the same job would, column by column, keys included", async () => {
    const [single, batched] = [uniqueQueue(), uniqueQueue()];
    for (const shape of SHAPES) await fx.backend.jobs.enqueue(keyed(single, "s:", shape), {});
    const batch = SHAPES.map((shape) => keyed(batched, "b:", shape));
    const results = await fx.backend.jobs.enqueueMany(batch, {});
    expect(results).toEqual(batch.map((job) => ({ id: job.id, deduplicated: false })));
    const read = async (queue: string) =>
      (
        await fx.admin.query(
          `SELECT job_name, args, substr(args_hash, 3) AS args_hash, priority, max_attempts,
             scheduled_at > now() AS later, substr(dedup_key, 3) AS dedup_key, unique_job, producer_id, "group",
             trace_id, trace_context, status
           FROM soniq_jobs WHERE queue = $1 ORDER BY created_at, id`,
          [queue],
        )
      ).rows;
    const expected = await read(single);
    expect(expected).toHaveLength(SHAPES.length);
    expect(await read(batched)).toEqual(expected);
  });

  it("upper-case ids are stored and answered as PostgreSQL prints them; stored keys still deduplicate", async () => {
    const queue = uniqueQueue();
    const key = `k-${randomUUID()}`;
    const first = await fx.backend.jobs.enqueue(newJob({ queue, dedupKey: key }), {});
    const batch = [newJob({ queue, dedupKey: `other-${key}` }), newJob({ queue, dedupKey: key })].map(
      (job) => ({
        ...job,
        id: job.id.toUpperCase(),
      }),
    );
    const results = await fx.backend.jobs.enqueueMany(batch, {});
    expect(results).toEqual([
      { id: batch[0]?.id.toLowerCase(), deduplicated: false },
      { id: first.id, deduplicated: true },
    ]);
    expect((await fx.backend.jobs.stats({ queue })).queued).toBe(2);
  });
});
