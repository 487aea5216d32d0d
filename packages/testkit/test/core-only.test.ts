/**
 * A backend with only the core facets certifies: the memory backend with every capability removed (what a
 * third party's first backend looks like). The kit registers no case of a capability it does not declare, and
 * says which capabilities it left uncertified.
 */

import { BACKEND_CAPABILITIES } from "@soniq/core/backend";
import { describe, expect, it } from "vitest";
import { memoryBackend, memoryInspector } from "../../backend-memory/src/index.js";
import { declaredNeeds } from "../src/applicability.js";
import { CONFORMANCE_CASES } from "../src/cases/index.js";
import { registerConformanceSuite } from "../src/register.js";
import { vitestRunner } from "../src/vitest.js";
import { withoutCapabilities } from "../src/without-capabilities.js";

const plan = await registerConformanceSuite({
  name: "core-only backend conformance",
  runner: vitestRunner(),
  harness: () => {
    const full = memoryBackend();
    return { backend: withoutCapabilities(full), inspector: memoryInspector(full) };
  },
});

describe("testkit/capabilities", () => {
  it("testkit/core-only-plan: no case of an undeclared capability is registered, and all of them are named uncertified", () => {
    expect(plan.uncertified).toEqual([...BACKEND_CAPABILITIES]);
    const registered = new Set(plan.registered);
    const capabilityCases = CONFORMANCE_CASES.filter((c) => declaredNeeds(c).length > 0);
    expect(capabilityCases.length).toBeGreaterThan(0);
    for (const c of capabilityCases) expect(registered.has(c.id), c.id).toBe(false);
    const coreCases = CONFORMANCE_CASES.filter((c) => declaredNeeds(c).length === 0);
    // Every core case applies to the memory backend's core facets (its inspector and fault-free harness).
    const excludedCore = plan.excluded.filter((e) => coreCases.some((c) => c.id === e.id));
    expect(excludedCore.map((e) => e.id)).toEqual(
      coreCases.filter((c) => !registered.has(c.id)).map((c) => c.id),
    );
    expect(coreCases.filter((c) => registered.has(c.id)).length).toBeGreaterThan(50);
  });
});
