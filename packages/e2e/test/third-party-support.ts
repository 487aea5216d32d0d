/**
 * For testkit-third-party.test.ts: a runner adapter written outside the testkit, the certification it runs,
 * and `broken()`, which builds a buggy third-party backend by replacing facet methods of a working one.
 */

import { type MemoryBackend, memoryBackend, memoryInspector } from "@soniq/backend-memory";
import type { Backend } from "@soniq/core/backend";
import { type HarnessFactory, registerConformanceSuite, type TestRunner } from "@soniq/testkit";

// The memory backend's test inspector (its raw state is not public API).

export interface Outcome {
  id: string;
  status: "passed" | "failed" | "skipped";
  message: string;
}

/** A runner adapter that collects the kit's tests and runs them in order, outside any test framework. */
export function collectingRunner() {
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

export async function certify(harness: HarnessFactory): Promise<Outcome[]> {
  const { runner, run } = collectingRunner();
  await registerConformanceSuite({ runner, harness, name: "third-party" });
  return run();
}

export const failed = (outcomes: Outcome[]) =>
  outcomes
    .filter((o) => o.status === "failed")
    .map((o) => o.id)
    .sort();
export const messageOf = (outcomes: Outcome[], id: string) =>
  outcomes.find((o) => o.id === id)?.message ?? "";

type Overrides = { [F in keyof Backend<never>]?: Partial<Backend<never>[F]> };

/**
 * Wrap a working backend, replacing some facet methods: how a buggy third-party backend is built here.
 * The harness provides the inspector (of the correct backend underneath), so the cases needing it run too.
 */
export function broken(overrides: (inner: MemoryBackend) => Overrides): HarnessFactory {
  return () => {
    const inner = memoryBackend();
    const o = overrides(inner);
    const backend: Backend<never> = {
      ...inner,
      name: "broken",
      migrations: { ...inner.migrations, ...o.migrations },
      jobs: { ...inner.jobs, ...o.jobs },
      runs: { ...inner.runs, ...o.runs },
      deadLetters: { ...inner.deadLetters, ...o.deadLetters },
      workers: { ...inner.workers, ...o.workers },
      leases: { ...inner.leases, ...o.leases },
      wakeUps: { ...inner.wakeUps, ...o.wakeUps },
      schedules: { ...inner.schedules, ...o.schedules },
      queues: { ...inner.queues, ...o.queues },
      audit: { ...inner.audit, ...o.audit },
      metrics: { ...inner.metrics, ...o.metrics },
      steps: { ...inner.steps, ...o.steps },
    };
    return { backend, inspector: memoryInspector(inner) };
  };
}
