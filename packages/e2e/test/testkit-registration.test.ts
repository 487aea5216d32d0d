import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { memoryBackend, memoryInspector } from "@soniq/backend-memory";
import { isSoniqError } from "@soniq/core";
import {
  CONFORMANCE_CASES,
  type ConformanceOptions,
  registerConformanceSuite,
  type TestRunner,
} from "@soniq/testkit";
import { describe, expect, it } from "vitest";

// The memory backend's test inspector (its raw state is not public API).

function collect() {
  const tests = new Map<string, Parameters<TestRunner["test"]>[1]>();
  const runner: TestRunner = {
    describe: (_name, body) => body(),
    test: (name, fn) => {
      tests.set(name.slice(0, name.indexOf(":")), fn);
    },
  };
  /** Run one case by id; resolves to the skip reason, or null when it ran and passed. */
  const run = async (id: string): Promise<string | null> => {
    const fn = tests.get(id);
    if (fn === undefined) throw new Error(`no test ${id}`);
    let reason: string | null = null;
    await fn({ skip: (r) => (reason = r) });
    return reason;
  };
  return { runner, tests, run };
}

const harness = () => ({ backend: memoryBackend() });

describe("registerConformanceSuite", () => {
  it("gives every case a unique area/behaviour id and a one-line title", () => {
    const ids = CONFORMANCE_CASES.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of CONFORMANCE_CASES) {
      expect(c.id).toMatch(/^[a-z-]+\/[a-z0-9-]+$/);
      expect(c.title.length).toBeGreaterThan(10);
      expect(c.title).not.toContain("\n");
    }
  });

  it("registers one test per applicable case, then suite/applicability and the leak check, named '<id>: <title>'", async () => {
    const { runner, tests } = collect();
    const plan = await registerConformanceSuite({ runner, harness });
    const excluded = new Set(plan.excluded.map((e) => e.id));
    const applicable = CONFORMANCE_CASES.map((c) => c.id).filter((id) => !excluded.has(id));
    expect([...tests.keys()]).toEqual([...applicable, "suite/applicability", "suite/no-leaks"]);
    expect(plan.registered).toEqual([...tests.keys()]);
    expect(plan.skipped).toEqual([]);
    const off = collect();
    await registerConformanceSuite({ runner: off.runner, harness, leakCheck: false });
    expect(off.tests.has("suite/no-leaks")).toBe(false);
  });

  it("rejects unknown skip ids and skips without a reason, listing every problem", async () => {
    const { runner } = collect();
    const options = {
      runner,
      harness,
      skip: { "claim/no-such-case": "x", "leases/exclusive": " " },
    } as unknown as ConformanceOptions;
    let error: unknown;
    try {
      await registerConformanceSuite(options);
    } catch (err) {
      error = err;
    }
    expect(isSoniqError(error, "SONIQ_INVALID_OPTIONS")).toBe(true);
    expect((error as Error).message).toContain('unknown case id "claim/no-such-case"');
    expect((error as Error).message).toContain('"leases/exclusive" needs a written reason');
  });

  it("reports a typed skip with its reason and never calls the harness for it", async () => {
    const { runner, run } = collect();
    let calls = 0;
    const plan = await registerConformanceSuite({
      runner,
      harness: () => {
        calls++;
        return { backend: memoryBackend() };
      },
      skip: { "leases/exclusive": "leases land in issue 12" },
    });
    expect(plan.skipped).toEqual([{ id: "leases/exclusive", reason: "leases land in issue 12" }]);
    const probes = calls;
    expect(await run("leases/exclusive")).toBe("skipped by the harness: leases land in issue 12");
    expect(calls).toBe(probes);
  });

  it("leaves out, unregistered, the cases whose capabilities or hooks are missing, and lists them", async () => {
    const { runner, run, tests } = collect();
    const titles: string[] = [];
    const plan = await registerConformanceSuite({
      runner: {
        ...runner,
        test: (name, fn, ms) => {
          titles.push(name);
          runner.test(name, fn, ms);
        },
      },
      harness: () => {
        const backend = memoryBackend();
        return {
          backend: { ...backend, capabilities: { ...backend.capabilities, transactionalEnqueue: true } },
        };
      },
    });
    const reasons = Object.fromEntries(plan.excluded.map((e) => [e.id, e.reason]));
    expect(reasons["enqueue/tx-rejected-without-capability"]).toBe(
      "needs capabilities.transactionalEnqueue = false; this backend declares true",
    );
    // Every unmet need, not only the first.
    expect(reasons["dlq/fault-between-steps-leaves-source-intact"]).toBe(
      "needs the harness to provide inspector.readJob(); and needs the harness to provide " +
        "inspector.readDeadLetterJob(); and needs the harness to provide injectDeadLetterFault()",
    );
    expect(reasons["workers/heartbeat-moves-forward"]).toBe(
      "needs the harness to provide inspector.backdateWorkerHeartbeat()",
    );
    for (const id of Object.keys(reasons)) expect(tests.has(id)).toBe(false);
    const title = titles.find((t) => t.startsWith("suite/applicability:")) ?? "";
    expect(title).toContain(
      "enqueue/tx-rejected-without-capability (needs capabilities.transactionalEnqueue = false; this backend declares true)",
    );
    expect(await run("suite/applicability")).toBeNull();
    expect(await run("claim/batch-returns-distinct-jobs")).toBeNull();
  });

  it("fails a case, and suite/applicability, when a harness provides less than the probe's did", async () => {
    const { runner, run } = collect();
    let probed = false;
    await registerConformanceSuite({
      runner,
      harness: () => {
        const backend = memoryBackend();
        if (probed) return { backend };
        probed = true;
        return { backend, inspector: memoryInspector(backend) };
      },
    });
    await expect(run("dlq/dead-letter-is-not-a-job-status")).rejects.toThrow(
      "does not provide what the probe's harness did: it needs the harness to provide inspector.writeJobStatus()",
    );
    await expect(run("suite/applicability")).rejects.toThrow("The harness is not consistent");
  });

  it("closes each case's backend and runs the harness cleanup, even when the case fails", async () => {
    const { runner, run } = collect();
    const closed: string[] = [];
    await registerConformanceSuite({
      runner,
      harness: ({ caseId }) => {
        const inner = memoryBackend();
        return {
          backend: {
            ...inner,
            runs: { ...inner.runs, claim: async () => ({ jobs: [], capped: null }) },
            close: async () => void closed.push(`close ${caseId}`),
          },
          cleanup: () => void closed.push(`cleanup ${caseId}`),
        };
      },
    });
    // The probe opened and closed one harness before registering.
    expect(closed.splice(0)).toEqual(["close suite/applicability", "cleanup suite/applicability"]);
    await expect(run("claim/batch-returns-distinct-jobs")).rejects.toThrow(
      "claim with limit 3 and 5 due jobs must return 3",
    );
    expect(closed).toEqual([
      "close claim/batch-returns-distinct-jobs",
      "cleanup claim/batch-returns-distinct-jobs",
    ]);
  });
});

describe("@soniq/testkit's cases page (docs/reference/testkit-cases.md)", () => {
  it("lists every case id with its one-line description", () => {
    const page = readFileSync(
      fileURLToPath(new URL("../../../docs/reference/testkit-cases.md", import.meta.url)),
      "utf8",
    );
    for (const c of CONFORMANCE_CASES) {
      expect(page, `the cases page is missing ${c.id}`).toMatch(
        new RegExp(`\\| \`${c.id}\` +\\| ${escapeRegExp(c.title)}`),
      );
    }
    expect(page).toContain(`${CONFORMANCE_CASES.length} cases, plus \`suite/applicability\``);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
