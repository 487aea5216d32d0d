/** Keyset paging through the app API (jobs.list, deadLetters.list/export) and its one normalisation. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../src/common/errors.js";
import { jobListQuery } from "../src/jobs/queries.js";
import { deadLetterAllDue, memoryApps, memoryBackend } from "./memory.js";

const app = memoryApps();

async function invalidField(call: () => unknown): Promise<unknown> {
  const err = await Promise.resolve()
    .then(call)
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
  return (err as { context?: { field?: unknown } }).context?.field;
}

describe("lists/keyset", () => {
  it("lists/after-and-before: pages walk newest first; before answers newest first too", async () => {
    const soniq = app({ allowUnknownJobNames: true });
    await soniq.jobs.enqueueMany(Array.from({ length: 7 }, (_, i) => ({ job: "paging.job", args: { i } })));
    const all = await soniq.jobs.list();
    expect(all).toHaveLength(7);
    const first = await soniq.jobs.list({ limit: 3 });
    const second = await soniq.jobs.list({ limit: 3, after: first[2] });
    const third = await soniq.jobs.list({ limit: 3, after: second[2] });
    expect([...first, ...second, ...third].map((j) => j.id)).toEqual(all.map((j) => j.id));
    expect((await soniq.jobs.list({ limit: 3, before: third[0] })).map((j) => j.id)).toEqual(
      second.map((j) => j.id),
    );
    expect(
      (
        await soniq.jobs.list({
          limit: 2,
          after: { createdAt: all[0]?.createdAt as Date, id: all[0]?.id.toUpperCase() as string },
        })
      ).map((j) => j.id),
    ).toEqual(all.slice(1, 3).map((j) => j.id));
  });

  it("lists/export-walks-every-row: export pages past 1000 rows by position, each row once", async () => {
    const backend = memoryBackend();
    const soniq = app({ allowUnknownJobNames: true }, backend);
    await soniq.jobs.enqueueMany(Array.from({ length: 1203 }, () => ({ job: "paging.job", args: {} })));
    await deadLetterAllDue(backend);
    const lines = (await soniq.deadLetters.export()).trim().split("\n");
    const ids = lines.map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toHaveLength(1203);
    expect(new Set(ids).size).toBe(1203);
    expect(ids.slice(0, 5)).toEqual((await soniq.deadLetters.list({ limit: 5 })).map((d) => d.id));
  });

  it("lists/position-normalised: a row or { createdAt, id } becomes a backend position", () => {
    const id = randomUUID().toUpperCase();
    const at = new Date("2026-12-01T10:00:00.123Z");
    expect(jobListQuery({ after: { createdAt: at, id } }).position).toEqual({
      at,
      id: id.toLowerCase(),
      direction: "older",
    });
    expect(jobListQuery({ before: { createdAt: at, id }, offset: 0 }).position?.direction).toBe("newer");
    expect(jobListQuery({}).position).toBeNull();
  });

  it("lists/bad-positions: each is SONIQ_INVALID_ARGUMENT naming the key", async () => {
    const soniq = app();
    const at = new Date();
    const id = randomUUID();
    expect(
      await invalidField(() =>
        soniq.jobs.list({ after: { createdAt: at, id }, before: { createdAt: at, id } }),
      ),
    ).toBe("jobs.list(filter).before");
    expect(await invalidField(() => soniq.jobs.list({ after: { createdAt: at, id }, offset: 5 }))).toBe(
      "jobs.list(filter).offset",
    );
    expect(await invalidField(() => soniq.jobs.list({ after: "x" as never }))).toBe(
      "jobs.list(filter).after",
    );
    expect(
      await invalidField(() => soniq.jobs.list({ after: { createdAt: new Date(Number.NaN), id } })),
    ).toBe("jobs.list(filter).after.createdAt");
    expect(await invalidField(() => soniq.jobs.list({ after: { createdAt: new Date(-8.64e15), id } }))).toBe(
      "jobs.list(filter).after.createdAt",
    );
    expect(await invalidField(() => soniq.jobs.list({ before: { createdAt: at, id: "job-1" } }))).toBe(
      "jobs.list(filter).before.id",
    );
    expect(await invalidField(() => soniq.deadLetters.list({ after: { createdAt: at, id } as never }))).toBe(
      "deadLetters.list(filter).after.movedToDeadLetterAt",
    );
    expect(
      await invalidField(() => soniq.deadLetters.export({ before: { movedToDeadLetterAt: at, id } })),
    ).toBe("deadLetters.export(filter).before");
    expect(
      await invalidField(() =>
        soniq.deadLetters.purgeWhere({ after: { movedToDeadLetterAt: at, id } } as never),
      ),
    ).toBe("deadLetters.purgeWhere(filter).after");
  });
});
