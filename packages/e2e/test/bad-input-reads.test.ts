/** The bad-input catalogue (see bad-input-support.ts): `jobs.list`, `jobs.stats`, the by-id reads and `explain`. */
import { expect, it } from "vitest";
import { type Case, catalogue } from "./bad-input-support.js";

const CASES: readonly Case[] = [
  [
    "jobs.list/statuses-typo",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.jobs.list({ statuses: ["queued"] } as never),
  ],
  ["jobs.list/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.list(null as never)],
  [
    "jobs.list/status-unknown",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.jobs.list({ status: "running" as never }),
  ],
  ["jobs.list/limit-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.list({ limit: 0 })],
  ["jobs.list/limit-string", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.list({ limit: "5" as never })],
  ["jobs.list/offset-negative", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.list({ offset: -1 })],
  ["jobs.list/queue-number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.list({ queue: 5 as never })],
  ["jobs.stats/unknown-key", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.stats({ q: "x" } as never)],
  ["jobs.stats/queue-number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.stats({ queue: 5 as never })],
  ["jobs.stats/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.stats(null as never)],
  ["jobs.list/job-name-nul", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.list({ jobName: "a\u0000" })],
  [
    "jobs.list/queue-lone-surrogate",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.jobs.list({ queue: "q\udc00" }),
  ],
  ["jobs.stats/queue-nul", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.jobs.stats({ queue: "a\u0000" })],
];

catalogue("reads", CASES, (f) => {
  it("bad-input/upper-case-uuid: an upper-case id finds the same rows", async () => {
    expect((await f().soniq.jobs.get(f().jobId.toUpperCase()))?.id).toBe(f().jobId);
    expect((await f().soniq.deadLetters.get(f().deadId.toUpperCase()))?.id).toBe(f().deadId);
    expect((await f().soniq.jobs.get(f().jobId.toUpperCase()))?.result ?? null).toBeNull();
  });

  it("bad-input/not-an-id: ids that are not UUIDs name no row (null/false), without a driver error", async () => {
    for (const id of ["", "nope", "\u0000", 42, null, "x".repeat(10_000)] as never[]) {
      expect(await f().soniq.jobs.get(id)).toBeNull();
      expect((await f().soniq.jobs.get(id))?.result ?? null).toBeNull();
      expect(await f().soniq.jobs.cancel(id)).toBe(false);
      expect(await f().soniq.deadLetters.get(id)).toBeNull();
      expect(await f().soniq.deadLetters.replay(id)).toBeNull();
      expect(await f().soniq.deadLetters.purge(id)).toBe(false);
    }
  });

  it("bad-input/explain-not-an-id: explain answers not_found for ids that are not UUIDs, without a driver error", async () => {
    for (const id of ["", "nope", "\u0000", 42, null, {}, "x".repeat(10_000)] as never[]) {
      const answer = await f().soniq.jobs.explain(id);
      expect(answer).toMatchObject({ status: null, verdict: "not_found" });
      expect(answer.reasons.map((r) => r.code)).toEqual(["not_found"]);
    }
    expect((await f().soniq.jobs.explain(f().jobId.toUpperCase())).status).toBe("queued");
    expect((await f().soniq.jobs.explain(f().deadId.toUpperCase())).status).toBe("dead_letter");
  });
});
