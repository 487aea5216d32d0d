/** The bad-input catalogue (see bad-input-support.ts): `listJobs`, `getQueueStats`, the by-id reads and `explain`. */
import { expect, it } from "vitest";
import { type Case, catalogue } from "./bad-input-support.js";

const CASES: readonly Case[] = [
  [
    "listJobs/statuses-typo",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.listJobs({ statuses: ["queued"] } as never),
  ],
  ["listJobs/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs(null as never)],
  [
    "listJobs/status-unknown",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.listJobs({ status: "running" as never }),
  ],
  ["listJobs/limit-0", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ limit: 0 })],
  ["listJobs/limit-string", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ limit: "5" as never })],
  ["listJobs/offset-negative", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ offset: -1 })],
  ["listJobs/queue-number", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ queue: 5 as never })],
  ["getQueueStats/unknown-key", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.getQueueStats({ q: "x" } as never)],
  [
    "getQueueStats/queue-number",
    "SONIQ_INVALID_ARGUMENT",
    (f) => f.soniq.getQueueStats({ queue: 5 as never }),
  ],
  ["getQueueStats/null", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.getQueueStats(null as never)],
  ["listJobs/job-name-nul", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ jobName: "a\u0000" })],
  ["listJobs/queue-lone-surrogate", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.listJobs({ queue: "q\udc00" })],
  ["getQueueStats/queue-nul", "SONIQ_INVALID_ARGUMENT", (f) => f.soniq.getQueueStats({ queue: "a\u0000" })],
];

catalogue("reads", CASES, (f) => {
  it("bad-input/upper-case-uuid: an upper-case id finds the same rows", async () => {
    expect((await f().soniq.getJob(f().jobId.toUpperCase()))?.id).toBe(f().jobId);
    expect((await f().soniq.deadLetter.get(f().deadId.toUpperCase()))?.id).toBe(f().deadId);
    expect(await f().soniq.getResult(f().jobId.toUpperCase())).toBeNull();
  });

  it("bad-input/not-an-id: ids that are not UUIDs name no row (null/false), without a driver error", async () => {
    for (const id of ["", "nope", "\u0000", 42, null, "x".repeat(10_000)] as never[]) {
      expect(await f().soniq.getJob(id)).toBeNull();
      expect(await f().soniq.getResult(id)).toBeNull();
      expect(await f().soniq.cancelJob(id)).toBe(false);
      expect(await f().soniq.deadLetter.get(id)).toBeNull();
      expect(await f().soniq.deadLetter.replay(id)).toBeNull();
      expect(await f().soniq.deadLetter.purge(id)).toBe(false);
    }
  });

  it("bad-input/explain-not-an-id: explain answers not_found for ids that are not UUIDs, without a driver error", async () => {
    for (const id of ["", "nope", "\u0000", 42, null, {}, "x".repeat(10_000)] as never[]) {
      const answer = await f().soniq.explain(id);
      expect(answer).toMatchObject({ status: null, verdict: "not_found" });
      expect(answer.reasons.map((r) => r.code)).toEqual(["not_found"]);
    }
    expect((await f().soniq.explain(f().jobId.toUpperCase())).status).toBe("queued");
    expect((await f().soniq.explain(f().deadId.toUpperCase())).status).toBe("dead_letter");
  });
});
