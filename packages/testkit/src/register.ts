/**
 * registerConformanceSuite: registers one test per conformance case with the injected runner.
 * Each case gets a fresh harness (backend + hooks), the kit guards and migrates the backend, runs the
 * case, runs its defers, closes the backend, runs the harness cleanup, then checks for leaked handles.
 */
import { type Backend, guardBackend, SoniqError } from "@soniq/core";
import { CONFORMANCE_CASES, type ConformanceCaseId } from "./cases/index.js";
import { createCaseContext } from "./context.js";
import { leakedSince, resourceCounts } from "./leaks.js";
import type {
  BackendHarness,
  CaseRequirements,
  ConformanceCase,
  HarnessFactory,
  TestRunner,
} from "./types.js";

/** Cases not to run, keyed by case id, each with the reason (shown in the runner's report). */
export type ConformanceSkips = { readonly [K in ConformanceCaseId]?: string };

export interface ConformanceOptions {
  /** The test runner (`vitestRunner()` from `@soniq/testkit/vitest`, or your adapter). */
  runner: TestRunner;
  /** Called once per case; returns a fresh backend and the optional inspector, fault hook and cleanup. */
  harness: HarnessFactory;
  /** Name of the enclosing suite. Default `"backend conformance"`. */
  name?: string;
  /** Cases to skip, each with a written reason. Unknown ids and empty reasons are rejected. */
  skip?: ConformanceSkips;
  /** Per-case timeout in ms. Default 30000. */
  timeoutMs?: number;
  /** After each case, look for sockets, servers and ref'ed timers it left open. Default true. */
  leakCheck?: boolean;
}

export const LEAK_CHECK_ID = "suite/no-leaks";

export function registerConformanceSuite(options: ConformanceOptions): void {
  const { runner, harness } = validate(options);
  const skips: Readonly<Record<string, string>> = options.skip ?? {};
  const timeoutMs = options.timeoutMs ?? 30_000;
  const leakCheck = options.leakCheck ?? true;
  const leaks: string[] = [];
  runner.describe(options.name ?? "backend conformance", () => {
    for (const c of CONFORMANCE_CASES) {
      runner.test(
        `${c.id}: ${c.title}`,
        async (t) => {
          const reason = skips[c.id];
          if (reason !== undefined) {
            t.skip(`skipped by the harness: ${reason}`);
            return;
          }
          await runCase(c, harness, t.skip.bind(t), leakCheck ? leaks : null);
        },
        timeoutMs,
      );
    }
    if (leakCheck) {
      runner.test(
        `${LEAK_CHECK_ID}: no case left a socket, server or ref'ed timer open`,
        async () => {
          if (leaks.length > 0) {
            throw new Error(
              `Handles left open after their backend was closed and the harness cleaned up:\n${leaks.join("\n")}\n` +
                "If these belong to a resource the harness shares across cases (an admin pool used by the inspector " +
                "or the fault hook), create it before the suite with a fixed size and warm it, or pass leakCheck: false.",
            );
          }
        },
        timeoutMs,
      );
    }
  });
}

async function runCase(
  c: ConformanceCase,
  factory: HarnessFactory,
  skip: (reason: string) => void,
  leaks: string[] | null,
): Promise<void> {
  const before = leaks === null ? null : resourceCounts();
  const harness = await factory({ caseId: c.id });
  let backend: Backend<unknown> | undefined;
  try {
    const unmet = unmetRequirements(c.requires, harness);
    if (unmet !== null) {
      skip(unmet);
      return;
    }
    backend = guardBackend(harness.backend);
    await backend.migrate();
    const deferred: (() => unknown)[] = [];
    try {
      await c.run(createCaseContext(c.id, backend, harness, deferred));
    } finally {
      for (const fn of deferred.reverse()) await fn();
    }
  } finally {
    await (backend ?? harness.backend).close();
    await harness.cleanup?.();
    if (before !== null && leaks !== null) {
      const leaked = await leakedSince(before);
      if (leaked.length > 0) leaks.push(`${c.id}: ${leaked.join(", ")}`);
    }
  }
}

/** Why the harness cannot run this case, or null when it can. */
export function unmetRequirements(
  requires: CaseRequirements | undefined,
  harness: BackendHarness,
): string | null {
  if (requires === undefined) return null;
  const capabilities = harness.backend.capabilities;
  for (const [name, wanted] of Object.entries(requires.capabilities ?? {})) {
    const actual = capabilities[name as keyof typeof capabilities];
    if (actual !== wanted)
      return `needs capabilities.${name} = ${String(wanted)}; this backend declares ${String(actual)}`;
  }
  for (const method of requires.inspector ?? []) {
    if (typeof harness.inspector?.[method] !== "function") {
      return `needs the harness to provide inspector.${method}()`;
    }
  }
  for (const method of requires.methods ?? []) {
    if (typeof harness.backend[method] !== "function") {
      return `needs the optional Backend method ${method}()`;
    }
  }
  if (requires.deadLetterFault === true && typeof harness.injectDeadLetterFault !== "function") {
    return "needs the harness to provide injectDeadLetterFault()";
  }
  if (requires.peer === true && typeof harness.openPeer !== "function") {
    return "needs the harness to provide openPeer() (a second instance on the same storage)";
  }
  return null;
}

function validate(options: ConformanceOptions): { runner: TestRunner; harness: HarnessFactory } {
  const problems: string[] = [];
  const runner = options?.runner;
  if (typeof runner?.describe !== "function" || typeof runner?.test !== "function") {
    problems.push(
      "runner must provide describe() and test() (use vitestRunner() from @soniq/testkit/vitest)",
    );
  }
  if (typeof options?.harness !== "function")
    problems.push("harness must be a function returning { backend, ... }");
  const known = new Set<string>(CONFORMANCE_CASES.map((c) => c.id));
  for (const [id, reason] of Object.entries(options?.skip ?? {})) {
    if (!known.has(id)) problems.push(`skip: unknown case id "${id}"`);
    if (typeof reason !== "string" || reason.trim() === "")
      problems.push(`skip: "${id}" needs a written reason`);
  }
  if (options?.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
    problems.push("timeoutMs must be a number > 0");
  }
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", `Invalid conformance options: ${problems.join("; ")}.`, {
      context: { problems },
    });
  }
  return { runner: options.runner, harness: options.harness };
}
