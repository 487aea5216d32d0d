import { describe, expect, it } from "vitest";
import {
  type ClaimCandidate,
  chooseClaim,
  claimQueues,
  type LimitedQueueRead,
  type QueueControls,
  type QueueUsage,
  queueSlots,
} from "../src/queues/claim-rules.js";

const job = (id: string, priority: number, scheduledAt = 0, createdAt = 0): ClaimCandidate => ({
  id,
  priority,
  scheduledAt,
  createdAt,
});

const unlimited = { concurrency: null, groupConcurrency: null, rateLimit: null };
const idle: QueueUsage = { processing: 0, startsInWindow: 0, windowOpensInMs: null, due: 0 };

function limited(
  queue: string,
  candidates: ClaimCandidate[],
  limits: Partial<QueueControls> = {},
  usage: Partial<QueueUsage> = {},
): LimitedQueueRead {
  return {
    queue,
    limits: { ...unlimited, concurrency: 10, ...limits },
    usage: { ...idle, due: candidates.length, ...usage },
    candidates,
  };
}

const ids = (jobs: readonly ClaimCandidate[]) => jobs.map((j) => j.id);

describe("claimQueues", () => {
  const controls = new Map<string, QueueControls>([
    ["paused", { ...unlimited, paused: true, concurrency: 2 }],
    ["b_limited", { ...unlimited, paused: false, rateLimit: { max: 1, perMs: 1000 } }],
    ["a_limited", { ...unlimited, paused: false, groupConcurrency: 1 }],
    ["cleared", { ...unlimited, paused: false }],
  ]);

  it("leaves paused queues out and splits the rest into open and limited (limited by name)", () => {
    expect(claimQueues(["x", "b_limited", "paused", "a_limited", "cleared", "x"], controls)).toEqual({
      open: ["x", "cleared"],
      limited: ["a_limited", "b_limited"],
    });
  });

  it("for every queue: open is null (every queue without a control) and limited lists the limited ones", () => {
    expect(claimQueues(null, controls)).toEqual({ open: null, limited: ["a_limited", "b_limited"] });
  });
});

describe("queueSlots", () => {
  it("is the smaller of the free concurrency and the starts left in the window, never below 0", () => {
    const limits = { ...unlimited, concurrency: 5, rateLimit: { max: 4, perMs: 1000 } };
    expect(queueSlots(limits, { ...idle, processing: 2, startsInWindow: 3 })).toBe(1);
    expect(queueSlots(limits, { ...idle, processing: 7 })).toBe(0);
    expect(queueSlots({ ...unlimited, groupConcurrency: 1 }, idle)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("chooseClaim", () => {
  it("takes the first `limit` claimable jobs in priority, scheduled_at, created_at order across open and limited", () => {
    const open = [job("o1", 2), job("o2", 5), job("o3", 7)];
    const conc = limited("conc", [job("l1", 1), job("l2", 3), job("l3", 4)], { concurrency: 2 });
    const choice = chooseClaim({ limit: 4 }, open, [conc]);
    expect(ids(choice.chosen)).toEqual(["l1", "o1", "l2", "o2"]);
    expect(ids(choice.fromLimited.get("conc") ?? [])).toEqual(["l1", "l2"]);
    expect(choice.capped).toBeNull();
  });

  it("breaks ties by scheduled_at, then created_at, then open before limited", () => {
    const open = [job("o", 1, 10, 5)];
    const a = limited("a", [job("a", 1, 10, 4)]);
    const b = limited("b", [job("b", 1, 9, 9)]);
    const tie = limited("c", [job("c", 1, 10, 5)]);
    expect(ids(chooseClaim({ limit: 4 }, open, [tie, a, b]).chosen)).toEqual(["b", "a", "o", "c"]);
  });

  it("spends limitedMax in claim order across limited queues and reports the rest as capped by capacity", () => {
    const a = limited("a", [job("a1", 5), job("a2", 6)]);
    const z = limited("z", [job("z1", 1), job("z2", 3)]);
    const choice = chooseClaim({ limit: 10, limitedMax: 1 }, [job("o", 9)], [a, z]);
    expect(ids(choice.chosen)).toEqual(["z1", "o"]);
    expect(choice.capped).toEqual({ retryInMs: null });
  });

  it("is not capped when a short claim left nothing due in a limited queue", () => {
    const choice = chooseClaim({ limit: 10 }, [], [limited("a", [job("a1", 1)])]);
    expect(choice.capped).toBeNull();
  });

  it("says when a rate window this claim filled opens (the window's own opening, or perMs for a fresh one)", () => {
    const rateLimit = { max: 2, perMs: 1000 };
    const fresh = limited(
      "fresh",
      [job("f1", 1), job("f2", 2)],
      { concurrency: null, rateLimit },
      { due: 3 },
    );
    expect(chooseClaim({ limit: 10 }, [], [fresh]).capped).toEqual({ retryInMs: 1000 });
    const used = limited(
      "used",
      [job("u1", 1)],
      { concurrency: null, rateLimit },
      { due: 2, startsInWindow: 1, windowOpensInMs: 250 },
    );
    expect(chooseClaim({ limit: 10 }, [], [fresh, used]).capped).toEqual({ retryInMs: 250 });
  });

  it("takes nothing from limited queues with limitedMax 0, and still says they hold due jobs", () => {
    const choice = chooseClaim({ limit: 5, limitedMax: 0 }, [job("o", 3)], [limited("a", [job("a1", 1)])]);
    expect(ids(choice.chosen)).toEqual(["o"]);
    expect(choice.capped).toEqual({ retryInMs: null });
  });
});
