/**
 * registerConformanceSuite: decides once which cases apply to the backend (a probe harness, see
 * applicability.ts), then registers one test per applicable case with the injected runner, plus
 * `suite/applicability` (lists what was left out) and `suite/no-leaks`. Each case gets a fresh harness
 * (backend + hooks), the kit guards and migrates the backend, runs the case, runs its defers, closes the
 * backend, runs the harness cleanup, then checks for leaked handles.
 */

import type { BackendCapability, GuardedBackend } from "@soniq/core/backend";
import { guardBackend, SoniqError } from "@soniq/core/backend";
import {
  APPLICABILITY_ID,
  applicabilityTitle,
  type ExcludedCase,
  probeApplicability,
  uncertifiedCapabilities,
  unmetRequirements,
} from "./applicability.js";
import { CONFORMANCE_CASES, type ConformanceCaseId } from "./cases/index.js";
import { createCaseContext } from "./context.js";
import { trackResources } from "./leaks.js";
import type { BackendHarness, ConformanceCase, HarnessFactory, TestRunner } from "./types.js";

/** Cases not to run, keyed by case id, each with the reason (shown in the runner's report). */
export type ConformanceSkips = { readonly [K in ConformanceCaseId]?: string };

export interface ConformanceOptions {
  /** The test runner (`vitestRunner()` from `@soniq/testkit/vitest`, or your adapter). */
  runner: TestRunner;
  /** Called once per case (and once more to probe); returns a fresh backend and the optional hooks. */
  harness: HarnessFactory;
  /** Name of the enclosing suite. Default `"backend conformance"`. */
  name?: string;
  /** Cases to skip, each with a written reason. Unknown ids and empty reasons are rejected. */
  skip?: ConformanceSkips;
  /** Per-case timeout in ms. Default 30000. */
  timeoutMs?: number;
  /** After each case, look for timers, sockets and servers it created and left alive. Default true. */
  leakCheck?: boolean;
}

/** What `registerConformanceSuite` registered, and what it left out. */
export interface ConformancePlan {
  /** Test ids in registration order (cases, `suite/applicability`, `suite/no-leaks`). */
  registered: string[];
  /** Cases whose requirements the backend or harness does not meet: not registered. */
  excluded: ExcludedCase[];
  /** Cases the options' `skip` names: registered, reported as skipped with the reason. */
  skipped: ExcludedCase[];
  /** The capabilities the backend does not declare, whose cases were therefore not run: not certified. */
  uncertified: BackendCapability[];
}

export const LEAK_CHECK_ID = "suite/no-leaks";

export async function registerConformanceSuite(options: ConformanceOptions): Promise<ConformancePlan> {
  const { runner, harness } = validate(options);
  const skips: Readonly<Record<string, string>> = options.skip ?? {};
  const timeoutMs = options.timeoutMs ?? 30_000;
  const leakCheck = options.leakCheck ?? true;
  const { excluded, declared } = await probeApplicability(harness, CONFORMANCE_CASES);
  const excludedIds = new Set(excluded.map((e) => e.id));
  const uncertified = uncertifiedCapabilities(CONFORMANCE_CASES, declared);
  const plan: ConformancePlan = { registered: [], excluded, skipped: [], uncertified };
  const leaks: string[] = [];
  runner.describe(options.name ?? "backend conformance", () => {
    for (const c of CONFORMANCE_CASES) {
      const reason = skips[c.id];
      if (reason === undefined && excludedIds.has(c.id)) continue;
      if (reason !== undefined) plan.skipped.push({ id: c.id, reason });
      plan.registered.push(c.id);
      runner.test(
        `${c.id}: ${c.title}`,
        async (t) => {
          if (reason !== undefined) {
            t.skip(`skipped by the harness: ${reason}`);
            return;
          }
          await runCase(c, harness, leakCheck ? leaks : null);
        },
        timeoutMs,
      );
    }
    plan.registered.push(APPLICABILITY_ID);
    runner.test(
      applicabilityTitle(CONFORMANCE_CASES.length, excluded, uncertified),
      () => checkApplicability(harness, excluded),
      timeoutMs,
    );
    if (leakCheck) {
      plan.registered.push(LEAK_CHECK_ID);
      runner.test(
        `${LEAK_CHECK_ID}: no case left a timer, socket or server alive`,
        async () => {
          if (leaks.length > 0) {
            throw new Error(
              `Timers or handles a case created and left alive after its backend was closed and the harness cleaned up:\n${leaks.join("\n")}\n` +
                "Clear every timer and close every socket in close(). If these belong to a resource the harness shares " +
                "across cases (an admin pool used by the inspector or the fault hook), create it before the suite with a " +
                "fixed size, no idle timeout, and warm it, or pass leakCheck: false.",
            );
          }
        },
        timeoutMs,
      );
    }
  });
  return plan;
}

/** The probe must be reproducible: a fresh harness leaves out exactly the same cases. */
async function checkApplicability(harness: HarnessFactory, excluded: readonly ExcludedCase[]): Promise<void> {
  const { excluded: again } = await probeApplicability(harness, CONFORMANCE_CASES);
  const show = (list: readonly ExcludedCase[]) =>
    list.map((e) => `${e.id} (${e.reason})`).join("; ") || "none";
  if (show(again) !== show(excluded)) {
    throw new Error(
      `The harness is not consistent: at registration it left out ${show(excluded)}; now it leaves out ${show(again)}. ` +
        "Return the same capabilities and hooks for every case.",
    );
  }
}

async function runCase(c: ConformanceCase, factory: HarnessFactory, leaks: string[] | null): Promise<void> {
  const tracker = leaks === null ? null : trackResources();
  let harness: BackendHarness;
  try {
    harness = await factory({ caseId: c.id });
  } catch (err) {
    await tracker?.finish(0);
    throw err;
  }
  let backend: GuardedBackend<unknown> | undefined;
  try {
    const unmet = unmetRequirements(c, harness);
    if (unmet !== null) {
      throw new Error(
        `The harness for ${c.id} does not provide what the probe's harness did: it ${unmet}. ` +
          "Return the same capabilities and hooks for every case.",
      );
    }
    backend = guardBackend(harness.backend);
    await backend.migrations.apply();
    const deferred: (() => unknown)[] = [];
    try {
      await c.run(createCaseContext(c.id, backend, harness, deferred));
    } finally {
      for (const fn of deferred.reverse()) await fn();
    }
  } finally {
    await (backend ?? harness.backend).close();
    await harness.cleanup?.();
    if (tracker !== null && leaks !== null) {
      const leaked = await tracker.finish();
      if (leaked.length > 0) leaks.push(`${c.id}: ${leaked.join(", ")}`);
    }
  }
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
