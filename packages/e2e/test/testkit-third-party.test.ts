/**
 * The testkit used as a third party would: backends defined here, outside the repo's packages,
 * certified through `@soniq/testkit`'s public entry point with a runner adapter written here
 * (third-party-support.ts). Deliberately broken backends must fail exactly the cases that cover their bug,
 * with messages that say what the contract requires, and pass every other case.
 */

import { memoryBackend, memoryInspector } from "@soniq/backend-memory";
import { CONFORMANCE_CASES, registerConformanceSuite } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { broken, certify, collectingRunner, failed, messageOf } from "./third-party-support.js";

/** A mailbox without keys: the resend is stored (and audited) again. */
const STEPS_KEYS_FAIL = ["steps/signal-audited", "steps/signal-keys"];
/** A wait that claims to suspend but keeps the job processing. */
const STEPS_NO_SUSPEND_FAIL = [
  "steps/signal-wakes-waiting-job",
  "steps/sleep-passed-and-kept",
  "steps/sleep-suspends",
];
/** A timeline newest first. */
const STEPS_ORDER_FAIL = [
  "steps/concurrent-saves",
  "steps/replay-keep-discard-resolve",
  "steps/save-fenced",
  "steps/signals-buffered-oldest-first",
];

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
      "dlq/dead-letter-is-not-a-job-status",
      "dlq/fault-between-steps-leaves-source-intact",
      "leases/take-over-from-stale-holder",
      "peers/claims-never-overlap",
      "peers/lease-exclusive-across-instances",
      "peers/see-each-others-writes",
      "peers/wake-up-reaches-other-instance",
      "schedules/one-row-per-tick-across-instances",
      "schedules/seen-by-peer",
      "status/raw-terminal-regressions-rejected",
      "subscribe/finished-from-peer",
      "workers/heartbeat-moves-forward",
      "workers/stale-recovery-requeues-only-stale-workers-jobs",
    ]);
    const applicability = names.find((n) => n.startsWith("suite/applicability:")) ?? "";
    for (const e of plan.excluded) {
      // Every unmet need of a case, joined with "; and ".
      const need =
        "needs (the harness to provide (inspector\\.\\w+\\(\\)|injectDeadLetterFault\\(\\)|openPeer\\(\\) \\(a second instance on the same storage\\))|capabilities\\.(multiProcess|notify) = true; this backend declares false)";
      expect(e.reason).toMatch(new RegExp(`^${need}(; and ${need})*$`));
      expect(applicability).toContain(`${e.id} (${e.reason})`);
    }
    // Every applicable case, plus suite/applicability and suite/no-leaks.
    expect(outcomes).toHaveLength(CONFORMANCE_CASES.length - plan.excluded.length + 2);
  }, 60_000);

  it("passes every case with the inspector (the broken() wrapper with nothing replaced)", async () => {
    const outcomes = await certify(broken(() => ({})));
    expect(failed(outcomes)).toEqual([]);
  }, 60_000);

  it("catches a backend that returns a claimed batch in the wrong order", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        runs: {
          claim: async (request) => {
            const result = await inner.runs.claim(request);
            return { ...result, jobs: result.jobs.reverse() };
          },
        },
      })),
    );
    // The one-order cases see it too: a mixed claim's jobs must come back in claim order.
    expect(failed(outcomes)).toEqual([
      "claim/limited-max-goes-in-claim-order",
      "claim/one-order-across-limited-and-open-queues",
      "claim/priority-then-scheduled-at-then-created-at",
    ]);
    const message = messageOf(outcomes, "claim/priority-then-scheduled-at-then-created-at");
    expect(message).toContain("claim order must be priority ASC, scheduled_at ASC, created_at ASC");
    // The message shows both orders, so the author sees what their backend did.
    expect(message).toMatch(/expected: \[ 'p1-t1-first'.*\n\s+actual: +\[ 'p1-t1-second'/);
  }, 60_000);

  it("catches a backend whose dead-letter move loses the dead-letter row", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        runs: {
          settle: async (items, workerId) => {
            const applied = await inner.runs.settle(items, workerId);
            for (const [i, item] of items.entries()) {
              if (item.kind === "dead_letter" && applied[i]) await inner.deadLetters.purge(item.id);
            }
            return applied;
          },
        },
      })),
    );
    expect(failed(outcomes)).toEqual([
      "audit/actions-record-with-their-change",
      "dlq/concurrent-moves-keep-stats-consistent",
      "dlq/conflict-leaves-source-intact",
      "dlq/filter-ids-and-bulk-match",
      "dlq/filter-q",
      "dlq/keyset-pages-and-count",
      "dlq/list-filters-and-order",
      "dlq/move-is-atomic",
      "dlq/purge-deletes-once",
      "dlq/replay-mints-fresh-job",
      "dlq/replay-twice-gives-two-jobs",
      "flows/cancel-and-run-policies",
      "flows/cancel-flow-with-held-steps",
      "flows/hold-replay-resumes",
      "flows/list-filters-by-state",
      "flows/notify-finished-after-reopen",
      "flows/purge-cancels-held",
      "flows/replayed-parent-counts-once",
      "jobs/args-version-stored",
      "settle/concurrent-settles-apply-each-once",
      "settle/mixed-batch-results-in-input-order",
      "stats/dead-letter-counts-across-tables",
      "stats/total-is-sum-in-every-state-mix",
      "steps/purge-deletes",
      "steps/replay-keep-discard-resolve",
      "steps/signal-targets",
      "trace/stored-and-carried",
      "versions/outdated-rows",
      "versions/rewrite-guarded",
      "webhooks/outbox-commits-with-replay-and-tick",
    ]);
    expect(messageOf(outcomes, "dlq/move-is-atomic")).toContain(
      "the dead-letter row must exist under the job's id",
    );
  }, 60_000);

  it("catches a backend whose settle ignores attempt fencing", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        runs: {
          // Settles whatever run is current: a late write lands on the wrong run.
          settle: async (items, workerId) => {
            const current = await Promise.all(items.map((item) => inner.jobs.get(item.id)));
            return inner.runs.settle(
              items.map((item, i) => ({ ...item, attempt: current[i]?.attempts ?? item.attempt })),
              workerId,
            );
          },
        },
      })),
    );
    expect(failed(outcomes)).toEqual([
      "fencing/late-outcome-alone-after-recovery",
      "fencing/late-writes-are-no-ops",
      "settle/mixed-batch-results-in-input-order",
    ]);
    expect(messageOf(outcomes, "fencing/late-writes-are-no-ops")).toContain(
      "items with attempt 1 after a re-claim (attempt 2) must not apply",
    );
  }, 60_000);

  it("catches a backend whose settle ignores the worker it is called for", async () => {
    const outcomes = await certify(
      broken((inner) => ({ runs: { settle: async (items, _workerId) => inner.runs.settle(items) } })),
    );
    expect(failed(outcomes)).toEqual(["fencing/late-outcome-of-a-lost-claim"]);
    expect(messageOf(outcomes, "fencing/late-outcome-of-a-lost-claim")).toContain(
      "a late retry by worker A must not apply to worker B's claim, though both carry attempt 1",
    );
  }, 60_000);

  it("catches a backend whose progress write ignores the worker it is called for", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        runs: { reportProgress: async (updates) => (await inner.runs.reportProgress?.(updates)) ?? 0 },
      })),
    );
    expect(failed(outcomes)).toEqual(["progress/late-value-of-a-lost-claim"]);
    expect(messageOf(outcomes, "progress/late-value-of-a-lost-claim")).toContain(
      "worker A's progress must not be written to worker B's claim, though both carry attempt 1",
    );
  }, 60_000);

  it("catches a jobs.list that ignores its queue filter", async () => {
    const outcomes = await certify(
      broken((inner) => ({ jobs: { list: (query) => inner.jobs.list({ ...query, queue: null }) } })),
    );
    // The keyset case pages within one queue too, so it catches this as well.
    expect(failed(outcomes)).toEqual([
      "jobs/filter-ids",
      "jobs/filter-q",
      "jobs/keyset-pages",
      "jobs/list-filters-and-pagination",
      "trace/stored-and-carried",
    ]);
    expect(messageOf(outcomes, "jobs/list-filters-and-pagination")).toContain(
      "list({ queue }) must return that queue's jobs only, newest first",
    );
  }, 60_000);

  it("catches a jobs.list that ignores its keyset position", async () => {
    const outcomes = await certify(
      broken((inner) => ({ jobs: { list: (query) => inner.jobs.list({ ...query, position: null }) } })),
    );
    expect(failed(outcomes)).toEqual(["jobs/filter-ids", "jobs/filter-q", "jobs/keyset-pages"]);
    expect(messageOf(outcomes, "jobs/keyset-pages")).toContain(
      "jobs.list: pages of 4 with after never reached the end: after must continue after the row it names",
    );
  }, 60_000);

  it("catches a deadLetters.count that ignores its filter, and queues.list estimating small counts", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        deadLetters: { count: (match) => inner.deadLetters.count({ ...match, jobName: null }) },
        queues: {
          list: async (query) =>
            (await inner.queues.list(query)).map((q) => ({ ...q, estimated: ["done" as const] })),
        },
      })),
    );
    expect(failed(outcomes)).toEqual([
      "dlq/keyset-pages-and-count",
      "queues/list-counts-exact-up-to-the-limit",
    ]);
    expect(messageOf(outcomes, "dlq/keyset-pages-and-count")).toContain(
      "count applies the jobName filter with the queue",
    );
  }, 60_000);

  it("catches a jobs.stats that ignores its queue filter", async () => {
    const outcomes = await certify(
      broken((inner) => ({ jobs: { stats: () => inner.jobs.stats({ queue: null }) } })),
    );
    expect(failed(outcomes)).toEqual([
      "stats/six-keys-zero-when-empty",
      "stats/total-is-sum-in-every-state-mix",
    ]);
    expect(messageOf(outcomes, "stats/total-is-sum-in-every-state-mix")).toContain(
      "jobs.stats({ queue }) after 2 enqueues must count that queue's jobs only",
    );
    expect(messageOf(outcomes, "stats/six-keys-zero-when-empty")).toContain(
      "jobs.stats({ queue }) of a queue without jobs must be all zero, whatever other queues hold",
    );
  }, 60_000);

  it("catches a deadLetters.list that ignores its queue filter", async () => {
    const outcomes = await certify(
      broken((inner) => ({
        deadLetters: { list: (query) => inner.deadLetters.list({ ...query, queue: null }) },
      })),
    );
    expect(failed(outcomes)).toEqual([
      "dlq/filter-q",
      "dlq/keyset-pages-and-count",
      "dlq/list-filters-and-order",
    ]);
    expect(messageOf(outcomes, "dlq/list-filters-and-order")).toContain(
      "list({ queue }) must return that queue's rows only, newest first",
    );
  }, 60_000);

  it("catches a heartbeat that never moves last_heartbeat forward", async () => {
    const outcomes = await certify(
      broken((inner) => {
        const inspector = memoryInspector(inner);
        return {
          workers: {
            // Stores the metadata but puts last_heartbeat back where it was (an UPDATE that forgot now()).
            heartbeat: async (workerId, metadata) => {
              const before = (await inner.workers.list()).find((w) => w.id === workerId)?.lastHeartbeat;
              const ok = await inner.workers.heartbeat(workerId, metadata);
              const after = (await inner.workers.list()).find((w) => w.id === workerId)?.lastHeartbeat;
              if (ok && before && after)
                await inspector.backdateWorkerHeartbeat(workerId, after.getTime() - before.getTime());
              return ok;
            },
          },
        };
      }),
    );
    expect(failed(outcomes)).toEqual(["workers/heartbeat-moves-forward"]);
    expect(messageOf(outcomes, "workers/heartbeat-moves-forward")).toContain(
      "heartbeat must move last_heartbeat forward",
    );
  }, 60_000);

  it("catches a migrations.apply() that is not idempotent, though the guard runs it only once", async () => {
    const rerun = await certify(
      broken(() => ({
        migrations: {
          // Reports (and would re-run) its migration on every call.
          apply: async () => ({ applied: ["0001_init"], pending: [], appliedNow: ["0001_init"] }),
          status: async () => ({ applied: ["0001_init"], pending: [] }),
        },
      })),
    );
    expect(failed(rerun)).toEqual(["lifecycle/migrate-is-idempotent"]);
    expect(messageOf(rerun, "lifecycle/migrate-is-idempotent")).toContain(
      "apply() on a migrated store must apply nothing (appliedNow [])",
    );
    const throwing = await certify(
      broken(() => {
        let calls = 0;
        return {
          migrations: {
            // Fails on a second run, as a CREATE TABLE without IF NOT EXISTS would.
            apply: async () => {
              calls++;
              if (calls > 1) throw new Error('relation "soniq_jobs" already exists');
              return { applied: [], pending: [], appliedNow: [] };
            },
          },
        };
      }),
    );
    expect(failed(throwing)).toEqual(["lifecycle/migrate-is-idempotent"]);
    expect(messageOf(throwing, "lifecycle/migrate-is-idempotent")).toContain(
      'apply() on a migrated store rejected (Error: relation "soniq_jobs" already exists): migrations.apply() must be idempotent',
    );
  }, 60_000);

  describe("the steps capability's cases catch broken steps facets", () => {
    it("a checkpoint saved without the fence (another attempt's or worker's run, a cancelled job)", async () => {
      const outcomes = await certify(
        broken((inner) => ({
          steps: {
            save: async (ref, write) => {
              const job = await inner.jobs.get(ref.id);
              return inner.steps.save(
                { ...ref, attempt: job?.attempts ?? ref.attempt, workerId: null },
                write,
              );
            },
          },
        })),
      );
      expect(failed(outcomes)).toEqual(["steps/concurrent-saves", "steps/save-fenced"]);
      expect(messageOf(outcomes, "steps/save-fenced")).toContain("a save for another attempt does not apply");
      expect(messageOf(outcomes, "steps/concurrent-saves")).toContain(
        "each save answers by its own run's fence",
      );
    }, 60_000);

    it("a mailbox that ignores keys (a resend stored again)", async () => {
      const outcomes = await certify(
        broken((inner) => ({
          steps: { signal: (request, audit) => inner.steps.signal({ ...request, key: null }, audit) },
        })),
      );
      expect(failed(outcomes)).toEqual(STEPS_KEYS_FAIL);
    }, 60_000);

    it("a wait that never gives the job back (the worker holds its slot through a long sleep)", async () => {
      const outcomes = await certify(
        broken((inner) => ({
          steps: {
            wait: async (ref, request) => {
              const result = await inner.steps.wait(ref, request, Number.MAX_SAFE_INTEGER);
              return result.state === "waiting" ? { ...result, suspended: true } : result;
            },
          },
        })),
      );
      expect(failed(outcomes)).toEqual(STEPS_NO_SUSPEND_FAIL);
    }, 60_000);

    it("a replay that drops the dead letter's checkpoints", async () => {
      const outcomes = await certify(
        broken((inner) => ({
          deadLetters: {
            replay: (id, request, audit) =>
              inner.deadLetters.replay(id, { ...request, steps: { keep: false, resolve: [] } }, audit),
          },
        })),
      );
      expect(failed(outcomes)).toEqual(["steps/replay-keep-discard-resolve"]);
    }, 60_000);

    it("a signal to a finished job answered as stored", async () => {
      const outcomes = await certify(
        broken((inner) => ({
          steps: {
            signal: async (request, audit) => {
              const job = await inner.jobs.get(request.jobId);
              if (job?.status === "done" || job?.status === "cancelled") {
                return { outcome: "stored", woke: false, deadLetter: false };
              }
              return inner.steps.signal(request, audit);
            },
          },
        })),
      );
      expect(failed(outcomes)).toEqual(["steps/signal-targets"]);
    }, 60_000);

    it("an audit row written for a duplicate signal too", async () => {
      const outcomes = await certify(
        broken((inner) => ({
          steps: {
            signal: async (request, audit) => {
              const result = await inner.steps.signal(request);
              if (audit !== undefined) await inner.audit.record(audit);
              return result;
            },
          },
        })),
      );
      expect(failed(outcomes)).toEqual(["steps/signal-audited"]);
    }, 60_000);

    it("a timeline listed newest first", async () => {
      const outcomes = await certify(
        broken((inner) => ({ steps: { list: async (id) => (await inner.steps.list(id)).reverse() } })),
      );
      expect(failed(outcomes)).toEqual(STEPS_ORDER_FAIL);
    }, 60_000);
  });

  it("reports a harness that leaks a handle in the suite/no-leaks case, naming the case", async () => {
    const timers: NodeJS.Timeout[] = [];
    const outcomes = await certify(({ caseId }) => {
      if (caseId === "leases/release") timers.push(setInterval(() => {}, 60_000));
      return { backend: memoryBackend() };
    });
    for (const t of timers) clearInterval(t);
    expect(failed(outcomes)).toEqual(["suite/no-leaks"]);
    expect(messageOf(outcomes, "suite/no-leaks")).toMatch(
      /\nleases\/release: 1 x Timeout from setInterval, ref'ed \(created at .*testkit-third-party\.test\.ts:\d+/,
    );
  }, 60_000);

  it("reports a backend that leaks an unref'ed timer per instance, under vitest", async () => {
    const timers: NodeJS.Timeout[] = [];
    const outcomes = await certify(() => {
      // A housekeeping timer the backend starts and its close() forgets to clear.
      timers.push(setInterval(() => {}, 60_000).unref());
      return { backend: memoryBackend() };
    });
    for (const t of timers) clearInterval(t);
    expect(failed(outcomes)).toEqual(["suite/no-leaks"]);
    const message = messageOf(outcomes, "suite/no-leaks");
    for (const c of CONFORMANCE_CASES.filter((c) => c.requires === undefined)) {
      expect(message).toContain(`\n${c.id}: 1 x Timeout from setInterval, unref'ed (created at `);
    }
  }, 60_000);
});
