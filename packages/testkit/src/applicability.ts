/**
 * Which cases apply to a backend, decided once before any test is registered: the kit opens one harness
 * (the probe), reads the backend's capabilities and the hooks the harness provides,
 * then closes it. Cases that do not apply are not registered at all; `suite/applicability` lists them.
 */
import {
  BACKEND_CAPABILITIES,
  type BackendCapability,
  declaredCapabilities,
  guardBackend,
} from "@soniq/core/backend";
import type { BackendHarness, CaseRequirements, ConformanceCase, HarnessFactory } from "./types.js";

const CAPABILITY_AREAS = new Set<string>(BACKEND_CAPABILITIES);

/**
 * The capabilities a case exercises: the ones it declares in `requires.declares`, and its area's when the area
 * is a capability (`flows/...` needs `flows`, `queues/...` needs `queues`, ...).
 */
export function declaredNeeds(c: Pick<ConformanceCase, "id" | "requires">): BackendCapability[] {
  const needs = new Set<BackendCapability>(c.requires?.declares ?? []);
  const area = c.id.split("/")[0] ?? "";
  if (CAPABILITY_AREAS.has(area)) needs.add(area as BackendCapability);
  return [...needs].sort();
}

export const APPLICABILITY_ID = "suite/applicability";

/** A case the kit did not register for this backend, and why. */
export interface ExcludedCase {
  id: string;
  reason: string;
}

/**
 * Every reason the harness cannot run this case (each need it does not meet, joined with "; and "), or null
 * when it can. All of them, so a backend author fixes every gap in one go.
 */
export function unmetRequirements(
  c: Pick<ConformanceCase, "id" | "requires">,
  harness: BackendHarness,
): string | null {
  const unmet: string[] = [];
  const declared = declaredCapabilities(harness.backend);
  for (const capability of declaredNeeds(c)) {
    if (!declared.has(capability))
      unmet.push(`needs the "${capability}" capability, which this backend does not declare`);
  }
  const requires: CaseRequirements | undefined = c.requires;
  if (requires === undefined) return unmet.length === 0 ? null : unmet.join("; and ");
  const capabilities = harness.backend.capabilities;
  for (const [name, wanted] of Object.entries(requires.capabilities ?? {})) {
    const actual = capabilities[name as keyof typeof capabilities];
    if (actual !== wanted)
      unmet.push(`needs capabilities.${name} = ${String(wanted)}; this backend declares ${String(actual)}`);
  }
  for (const method of requires.inspector ?? []) {
    if (typeof harness.inspector?.[method] !== "function") {
      unmet.push(`needs the harness to provide inspector.${method}()`);
    }
  }
  if (requires.deadLetterFault === true && typeof harness.injectDeadLetterFault !== "function") {
    unmet.push("needs the harness to provide injectDeadLetterFault()");
  }
  if (requires.peer === true && typeof harness.openPeer !== "function") {
    unmet.push("needs the harness to provide openPeer() (a second instance on the same storage)");
  }
  return unmet.length === 0 ? null : unmet.join("; and ");
}

/** Open one harness, list the cases it cannot run, then close its backend and run its cleanup. */
export async function probeApplicability(
  factory: HarnessFactory,
  cases: readonly ConformanceCase[],
): Promise<{ excluded: ExcludedCase[]; declared: Set<BackendCapability> }> {
  const harness = await factory({ caseId: APPLICABILITY_ID });
  try {
    const excluded: ExcludedCase[] = [];
    for (const c of cases) {
      const reason = unmetRequirements(c, harness);
      if (reason !== null) excluded.push({ id: c.id, reason });
    }
    return { excluded, declared: declaredCapabilities(harness.backend) };
  } finally {
    try {
      await guardBackend(harness.backend).close();
    } finally {
      await harness.cleanup?.();
    }
  }
}

/** The capabilities whose cases were not registered because the backend does not declare them. */
export function uncertifiedCapabilities(
  cases: readonly ConformanceCase[],
  declared: ReadonlySet<BackendCapability>,
): BackendCapability[] {
  const out = new Set<BackendCapability>();
  for (const c of cases) for (const need of declaredNeeds(c)) if (!declared.has(need)) out.add(need);
  return BACKEND_CAPABILITIES.filter((c) => out.has(c));
}

/** The applicability test's title: what was left out, so a backend author sees it in the report. */
export function applicabilityTitle(
  total: number,
  excluded: readonly ExcludedCase[],
  uncertified: readonly BackendCapability[] = [],
): string {
  if (excluded.length === 0) return `${APPLICABILITY_ID}: all ${total} cases apply to this backend`;
  const list = excluded.map((e) => `${e.id} (${e.reason})`).join("; ");
  const capabilities =
    uncertified.length === 0 ? "" : `; not certified (not declared): ${uncertified.join(", ")}`;
  return `${APPLICABILITY_ID}: ${total - excluded.length} of ${total} cases apply${capabilities}; not registered: ${list}`;
}
