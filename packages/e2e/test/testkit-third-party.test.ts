/**
 * The testkit used as a third party would: backends defined here, outside the repo's packages,
 * certified through `@soniq/testkit`'s public entry point with a runner adapter written here.
 * Deliberately broken backends must fail exactly the cases that cover their bug, with messages that
 * say what the contract requires, and pass every other case.
 */

import { memoryBackend } from "@soniq/backend-memory";
import type { Backend } from "@soniq/core";
import {
  CONFORMANCE_CASES,
  type HarnessFactory,
  registerConformanceSuite,
  type TestRunner,
} from "@soniq/testkit";
import { describe, expect, it } from "vitest";

interface Outcome {
  id: string;
  status: "passed" | "failed" | "skipped";
  message: string;
}

/** A runner adapter that collects the kit's tests and runs them in order, outside any test framework. */
function collectingRunner() {
  const tests: { name: string; fn: Parameters<TestRunner["test"]>[1] }[] = [];
  const runner: TestRunner = {
    describe: (_name, body) => body(),
    test: (name, fn) => {
      tests.push({ name, fn });
    },
  };
  const run = async (): Promise<Outcome[]> => {
    const outcomes: Outcome[] = [];
    for (const t of tests) {
      const id = t.name.slice(0, t.name.indexOf(":"));
      let skipped: string | null = null;
      try {
        await t.fn({ skip: (reason) => (skipped = reason) });
        outcomes.push({ id, status: skipped === null ? "passed" : "skipped", message: skipped ?? "" });
      } catch (err) {
        outcomes.push({ id, status: "failed", message: err instanceof Error ? err.message : String(err) });
      }
    }
    return outcomes;
  };
  return { runner, run };
}

async function certify(harness: HarnessFactory): Promise<Outcome[]> {
  const { runner, run } = collectingRunner();
  await registerConformanceSuite({ runner, harness, name: "third-party" });
  return run();
}

const failed = (outcomes: Outcome[]) =>
  outcomes
    .filter((o) => o.status === "failed")
    .map((o) => o.id)
    .sort();
const messageOf = (outcomes: Outcome[], id: string) => outcomes.find((o) => o.id === id)?.message ?? "";

/** Wrap a working backend, replacing some methods: how a buggy third-party backend is built here. */
function broken(overrides: (inner: Backend<never>) => Partial<Backend<never>>): HarnessFactory {
  return () => {
    const inner = memoryBackend();
    const backend: Backend<never> = { ...inner, ...overrides(inner), name: "broken" };
    return { backend };
  };
}

describe("@soniq/testkit certifying a backend defined outside the repo's packages", () => {
  it("passes every case for a correct backend (memory without inspector or fault hook: those cases and the multi-instance ones are not registered, and listed with reasons)", async () => {
    const { runner, run } = collectingRunner();
    const names: string[] = [];
    const plan = await registerConformanceSuite({
      runner: {
        ...runner,
        test: (name, fn, ms) => {
          names.push(name);
          runner.test(name, fn, ms);
        },
      },
      harness: () => ({ backend: memoryBackend() }),
      name: "third-party",
    });
    const outcomes = await run();
    expect(failed(outcomes)).toEqual([]);
    expect(outcomes.filter((o) => o.status === "skipped")).toEqual([]);
    expect(plan.excluded.map((e) => e.id).sort()).toEqual([
      "dlq/batch-move-fault-leaves-all-intact",
      "dlq/dead-letter-is-not-a-job-status",
      "dlq/fault-between-steps-leaves-source-intact",
      "peers/claims-never-overlap",
      "peers/lease-exclusive-across-instances",
      "peers/see-each-others-writes",
      "peers/wake-up-reaches-other-instance",
      "status/raw-terminal-regressions-rejected",
      "workers/stale-recovery-requeues-only-stale-workers-jobs",
    ]);
    const applicability = names.find((n) => n.startsWith("suite/applicability:")) ?? "";
    for (const e of plan.excluded) {
      expect(e.reason).toMatch(
        /^needs (the harness to provide (inspector\.\w+\(\)|injectDeadLetterFault\(\))|capabilities\.(multiProcess|notify) = true; this backend declares false)$/,
      );
      expect(applicability).toContain(`${e.id} (${e.reason})`);
    }
    // Every applicable case, plus suite/applicability and suite/no-leaks.
    expect(outcomes).toHaveLength(CONFORMANCE_CASES.length - plan.excluded.length + 2);
  }, 60_000);

  it("catches a backend that returns a claimed batch in the wrong order", async () => {
    const outcomes = await certify(
      broken((inner) => ({ claim: async (request) => (await inner.claim(request)).reverse() })),
    );
    expect(failed(outcomes)).toEqual(["claim/priority-then-scheduled-at-then-created-at"]);
    expect(messageOf(outcomes, "claim/priority-then-scheduled-at-then-created-at")).toContain(
      "claim order must be priority ASC, scheduled_at ASC, created_at ASC",
    );
    // The message shows both orders, so the author sees what their backend did.
    expect(messageOf(outcomes, "claim/priority-then-scheduled-at-then-created-at")).toMatch(
      /expected: \[ 'p1-t1-first'.*\n\s+actual: +\[ 'p1-t1-second'/,
    );
  }, 60_000);

  it("catches a backend whose dead-letter move loses the dead-letter row", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        markJobDeadLetter: async (id, options) => {
          const moved = await inner.markJobDeadLetter(id, options);
          if (moved) await inner.purgeDeadLetterJob(id);
          return moved;
        },
      })),
    );
    expect(failed(outcomes)).toEqual([
      "dlq/batch-move-skips-conflicting-items",
      "dlq/concurrent-moves-keep-stats-consistent",
      "dlq/conflict-leaves-source-intact",
      "dlq/list-filters-and-order",
      "dlq/move-is-atomic",
      "dlq/moves-queued-jobs-without-attempt",
      "dlq/purge-deletes-once",
      "dlq/replay-mints-fresh-job",
      "dlq/replay-twice-gives-two-jobs",
      "stats/dead-letter-counts-across-tables",
      "stats/total-is-sum-in-every-state-mix",
    ]);
    expect(messageOf(outcomes, "dlq/move-is-atomic")).toContain(
      "the dead-letter row must exist under the job's id",
    );
    expect(messageOf(outcomes, "dlq/conflict-leaves-source-intact")).toContain(
      "should reject with SONIQ_DEAD_LETTER_CONFLICT, but it resolved",
    );
  }, 60_000);

  it("catches a backend whose worker writes ignore attempt fencing", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        // Looks the job up and completes whatever run is current: a late write lands on the wrong run.
        complete: async (items) => {
          let applied = 0;
          for (const item of items) {
            const job = await inner.getJob(item.id);
            if (job === null) continue;
            applied += await inner.complete([{ ...item, attempt: job.attempts }]);
          }
          return applied;
        },
      })),
    );
    expect(failed(outcomes)).toEqual([
      "complete/batch-counts-only-applied",
      "fencing/late-writes-are-no-ops",
    ]);
    expect(messageOf(outcomes, "fencing/late-writes-are-no-ops")).toContain(
      "complete with attempt 1 after a re-claim (attempt 2) must apply 0",
    );
  }, 60_000);

  it("reports a harness that leaks a handle in the suite/no-leaks case", async () => {
    const timers: NodeJS.Timeout[] = [];
    const outcomes = await certify(({ caseId }) => {
      if (caseId === "leases/release") timers.push(setInterval(() => {}, 60_000));
      return { backend: memoryBackend() };
    });
    for (const t of timers) clearInterval(t);
    expect(failed(outcomes)).toEqual(["suite/no-leaks"]);
    expect(messageOf(outcomes, "suite/no-leaks")).toContain("leases/release: 1 x Timeout");
  }, 60_000);
});
