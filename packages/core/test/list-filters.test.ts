/** The text search (`q`) and id set (`ids`) filters: their one normalisation and their use through the app API. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../src/common/errors.js";
import { deadLetterListQuery, deadLetterMatch, jobListQuery } from "../src/jobs/queries.js";
import { deadLetterAllDue, memoryApps, memoryBackend } from "./memory.js";

const app = memoryApps();

function invalidField(call: () => unknown): unknown {
  try {
    call();
  } catch (err) {
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    return (err as { context?: { field?: unknown } }).context?.field;
  }
  throw new Error("expected SONIQ_INVALID_ARGUMENT");
}

describe("lists/filters", () => {
  it("lists/q-and-ids-normalised: ids lower-cased and deduplicated, [] kept, q as given, absent = null", () => {
    const id = randomUUID();
    const query = jobListQuery({ q: "Boom 50%", ids: [id.toUpperCase(), id] });
    expect(query.q).toBe("Boom 50%");
    expect(query.ids).toEqual([id]);
    expect(jobListQuery({ ids: [] }).ids).toEqual([]);
    expect(jobListQuery({})).toMatchObject({ q: null, ids: null });
    expect(deadLetterListQuery({ q: "x", ids: [id] })).toMatchObject({ q: "x", ids: [id] });
    expect(deadLetterMatch({ ids: [] }, "deadLetters.purgeWhere(filter)")).toMatchObject({
      q: null,
      ids: [],
    });
  });

  it("lists/bad-q-and-ids: each is SONIQ_INVALID_ARGUMENT naming the key", () => {
    expect(invalidField(() => jobListQuery({ q: "" }))).toBe("jobs.list(filter).q");
    expect(invalidField(() => jobListQuery({ q: 5 as never }))).toBe("jobs.list(filter).q");
    expect(invalidField(() => jobListQuery({ ids: "a" as never }))).toBe("jobs.list(filter).ids");
    expect(invalidField(() => jobListQuery({ ids: [randomUUID(), "job-1"] }))).toBe("jobs.list(filter).ids");
    expect(invalidField(() => jobListQuery({ ids: [7 as never] }))).toBe("jobs.list(filter).ids");
    const many = Array.from({ length: 1001 }, () => randomUUID());
    expect(invalidField(() => jobListQuery({ ids: many }))).toBe("jobs.list(filter).ids");
    expect(jobListQuery({ ids: many.slice(0, 1000) }).ids).toHaveLength(1000);
    expect(invalidField(() => deadLetterListQuery({ ids: ["nope"] }))).toBe("deadLetters.list(filter).ids");
    expect(invalidField(() => deadLetterMatch({ q: "" }, "deadLetters.replayWhere(filter)"))).toBe(
      "deadLetters.replayWhere(filter).q",
    );
  });

  it("lists/q-and-ids-through-the-app: jobs.list and deadLetters.list answer them; bulk by ids acts on those rows with one audit row", async () => {
    const backend = memoryBackend();
    const soniq = app({ allowUnknownJobNames: true }, backend);
    const [a, b, c] = await soniq.jobs.enqueueMany([
      { job: "orders.send_receipt", args: { n: 1 } },
      { job: "orders.refund", args: { note: "receipt" } },
      { job: "orders.refund", args: { n: 3 } },
    ]);
    const idsOf = (rows: { id: string }[]) => rows.map((r) => r.id).sort();
    expect(idsOf(await soniq.jobs.list({ q: "RECEIPT" }))).toEqual([a?.id]);
    expect(idsOf(await soniq.jobs.list({ ids: [b?.id as string, c?.id as string] }))).toEqual(
      [b?.id, c?.id].sort(),
    );
    expect(await soniq.jobs.list({ ids: [] })).toEqual([]);
    await deadLetterAllDue(backend);
    expect(idsOf(await soniq.deadLetters.list({ q: "refund" }))).toEqual([b?.id, c?.id].sort());
    const dry = await soniq.deadLetters.purgeWhere(
      { ids: [a?.id as string, c?.id as string] },
      { dryRun: true },
    );
    expect(dry).toEqual({ count: 2, dryRun: true });
    const done = await soniq.deadLetters.purgeWhere(
      { ids: [a?.id as string, c?.id as string] },
      { actor: "t" },
    );
    expect(done).toEqual({ count: 2, dryRun: false });
    expect(idsOf(await soniq.deadLetters.list())).toEqual([b?.id]);
    expect(await soniq.deadLetters.purgeWhere({ ids: [] })).toEqual({ count: 0, dryRun: false });
    const actions = (await soniq.audit.list()).map((r) => r.action);
    expect(actions.filter((x) => x === "dead_letter.purge_where")).toHaveLength(3);
    expect(actions).not.toContain("dead_letter.purge");
  });
});
