/**
 * Core's limited claim over a tiny in-memory store, through the backend entry as a third-party backend would
 * call it: the store only reads and writes; the limits, the budget, the order and `capped` come from core.
 */
import {
  type AsyncLimitedClaimStore,
  type ClaimCandidate,
  type LimitedClaimStore,
  type QueueControls,
  runLimitedClaimAsync,
  runLimitedClaimSync,
} from "@soniq/core/backend";
import { describe, expect, it } from "vitest";

interface FakeJob extends ClaimCandidate {
  queue: string;
  group: string | null;
  status: "queued" | "processing";
}

const NOW = 10_000;

class FakeStore implements LimitedClaimStore<FakeJob, FakeJob> {
  readonly calls: string[] = [];
  readonly starts = new Map<string, number[]>();
  /** Jobs another claim takes between this claim's pick and its take. */
  stolen: string[] = [];

  constructor(
    readonly jobs: FakeJob[],
    readonly controls: Map<string, QueueControls>,
  ) {}

  private due(queue: string): FakeJob[] {
    return this.jobs
      .filter((j) => j.queue === queue && j.status === "queued" && j.scheduledAt <= NOW)
      .sort((a, b) => a.priority - b.priority || a.scheduledAt - b.scheduledAt || a.createdAt - b.createdAt);
  }

  lockQueues(names: readonly string[]): ReadonlyMap<string, QueueControls> {
    this.calls.push(`lock ${names.join(",")}`);
    return this.controls;
  }

  usage(queue: string, controls: QueueControls, dueUpTo: number) {
    this.calls.push(`usage ${queue}`);
    const perMs = controls.rateLimit?.perMs ?? 0;
    const starts = (this.starts.get(queue) ?? []).filter((t) => t > NOW - perMs);
    return {
      processing: this.jobs.filter((j) => j.queue === queue && j.status === "processing").length,
      startsInWindow: starts.length,
      windowOpensInMs: starts.length === 0 ? null : Math.max(1, Math.min(...starts) + perMs - NOW),
      due: Math.min(this.due(queue).length, dueUpTo),
    };
  }

  pick(queue: string, controls: QueueControls, ask: number): FakeJob[] {
    this.calls.push(`pick ${queue} ${ask}`);
    const held = new Map<string, number>();
    for (const j of this.jobs)
      if (j.queue === queue && j.status === "processing" && j.group !== null)
        held.set(j.group, (held.get(j.group) ?? 0) + 1);
    const out: FakeJob[] = [];
    for (const j of this.due(queue)) {
      if (out.length === ask) break;
      if (controls.groupConcurrency !== null && j.group !== null) {
        if ((held.get(j.group) ?? 0) >= controls.groupConcurrency) continue;
        held.set(j.group, (held.get(j.group) ?? 0) + 1);
      }
      out.push(j);
    }
    return out;
  }

  pickOpen(limit: number): FakeJob[] {
    this.calls.push(`pickOpen ${limit}`);
    return this.due("open").slice(0, limit);
  }

  take(chosen: readonly FakeJob[], starts: ReadonlyMap<string, readonly FakeJob[]>): FakeJob[] {
    this.calls.push(`take ${chosen.length}`);
    const taken = chosen.filter((j) => j.status === "queued" && !this.stolen.includes(j.id));
    for (const j of taken) j.status = "processing";
    for (const [queue, jobs] of starts)
      this.starts.set(queue, [...(this.starts.get(queue) ?? []), ...jobs.map(() => NOW)]);
    // Any order: core puts the jobs back in claim order.
    return [...taken].reverse();
  }
}

let created = 0;
const job = (id: string, queue: string, priority: number, group: string | null = null): FakeJob => ({
  id,
  queue,
  group,
  priority,
  scheduledAt: 0,
  createdAt: created++,
  status: "queued",
});

const controls = (c: Partial<QueueControls>): QueueControls => ({
  paused: false,
  concurrency: null,
  groupConcurrency: null,
  rateLimit: null,
  ...c,
});

const ids = (jobs: readonly { id: string }[]) => jobs.map((j) => j.id);

describe("limited claim", () => {
  it("limited-claim/caps-groups-and-rate-in-one-claim: group caps and a rate window hold in one claim, in claim order across queues", () => {
    const store = new FakeStore(
      [
        job("g-a1", "grouped", 1, "a"),
        job("g-a2", "grouped", 2, "a"),
        job("g-b1", "grouped", 3, "b"),
        job("g-n1", "grouped", 4),
        job("r1", "rated", 1),
        job("r2", "rated", 5),
        job("r3", "rated", 6),
        job("o1", "open", 2),
        job("o2", "open", 9),
      ],
      new Map([
        ["grouped", controls({ groupConcurrency: 1 })],
        ["rated", controls({ rateLimit: { max: 2, perMs: 1000 } })],
      ]),
    );
    store.starts.set("rated", [NOW - 400]);
    const claim = runLimitedClaimSync(store, { limit: 10, limited: ["rated", "grouped"] });
    // One job of group a; the rate window held one start, so one more; the open queue fills the rest.
    expect(ids(claim.jobs)).toEqual(["g-a1", "r1", "o1", "g-b1", "g-n1", "o2"]);
    expect(store.starts.get("rated")).toEqual([NOW - 400, NOW]);
    // The rate window still holds r2 and r3 back; it opens when its start 400 ms ago leaves it.
    expect(claim.capped).toEqual({ retryInMs: 600 });
    expect(store.calls).toEqual([
      "lock rated,grouped",
      "usage grouped",
      "pick grouped 4",
      "usage rated",
      "pick rated 1",
      "pickOpen 10",
      "take 6",
    ]);
  });

  it("limited-claim/limited-max-and-concurrency: limitedMax and a queue's free slots bound what the store is asked for", () => {
    const busy = job("busy", "conc", 0);
    busy.status = "processing";
    const store = new FakeStore(
      [busy, job("c1", "conc", 1), job("c2", "conc", 2), job("c3", "conc", 3), job("o1", "open", 5)],
      new Map([["conc", controls({ concurrency: 3 })]]),
    );
    const claim = runLimitedClaimSync(store, { limit: 5, limitedMax: 1, limited: ["conc"] });
    expect(ids(claim.jobs)).toEqual(["c1", "o1"]);
    expect(claim.capped).toEqual({ retryInMs: null });
    expect(store.calls).toContain("pick conc 1");
  });

  it("limited-claim/skips-queue-paused-under-lock: a queue paused before the lock gives nothing and is not read", () => {
    const store = new FakeStore(
      [job("p1", "paused", 1), job("o1", "open", 2)],
      new Map([["paused", controls({ paused: true, concurrency: 5 })]]),
    );
    const claim = runLimitedClaimSync(store, { limit: 5, limited: ["paused"] });
    expect(ids(claim.jobs)).toEqual(["o1"]);
    expect(claim.capped).toBeNull();
    expect(store.calls).toEqual(["lock paused", "pickOpen 5", "take 1"]);
  });

  it("limited-claim/takes-nothing-when-full: with every slot held nothing is picked or taken, and the claim says capped", () => {
    const busy = job("busy", "conc", 0);
    busy.status = "processing";
    const store = new FakeStore(
      [busy, job("c1", "conc", 1)],
      new Map([["conc", controls({ concurrency: 1 })]]),
    );
    const claim = runLimitedClaimSync(store, { limit: 5, limited: ["conc"] });
    expect(claim).toEqual({ jobs: [], capped: { retryInMs: null } });
    expect(store.calls).toEqual(["lock conc", "usage conc", "pickOpen 5"]);
  });

  it("limited-claim/leaves-out-jobs-taken-meanwhile: a chosen job the store did not take is left out", () => {
    const store = new FakeStore(
      [job("c1", "conc", 1), job("c2", "conc", 2)],
      new Map([["conc", controls({ concurrency: 5 })]]),
    );
    store.stolen = ["c1"];
    expect(ids(runLimitedClaimSync(store, { limit: 5, limited: ["conc"] }).jobs)).toEqual(["c2"]);
  });

  it("limited-claim/async-runs-the-same-program: the asynchronous runner makes the same calls and answer", async () => {
    const make = () =>
      new FakeStore(
        [job("g-a1", "grouped", 1, "a"), job("g-a2", "grouped", 2, "a"), job("o1", "open", 3)],
        new Map([["grouped", controls({ groupConcurrency: 1 })]]),
      );
    const sync = make();
    const expected = runLimitedClaimSync(sync, { limit: 5, limited: ["grouped"] });
    const inner = make();
    const async: AsyncLimitedClaimStore<FakeJob, FakeJob> = {
      lockQueues: async (names) => inner.lockQueues(names),
      usage: async (queue, c, dueUpTo) => inner.usage(queue, c, dueUpTo),
      pick: async (queue, c, ask) => inner.pick(queue, c, ask),
      pickOpen: async (limit) => inner.pickOpen(limit),
      take: async (chosen, starts) => inner.take(chosen, starts),
    };
    const claim = await runLimitedClaimAsync(async, { limit: 5, limited: ["grouped"] });
    expect(ids(claim.jobs)).toEqual(ids(expected.jobs));
    expect(claim.capped).toEqual(expected.capped);
    expect(inner.calls).toEqual(sync.calls);
  });
});
