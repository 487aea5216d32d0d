import { memoryInspector } from "@soniq/backend-memory";
import { memoryBackendWithFaults } from "@soniq/backend-memory/testing";
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";

await registerConformanceSuite({
  name: "memory backend conformance",
  runner: vitestRunner(),
  harness: () => {
    let armed = false;
    const backend = memoryBackendWithFaults(undefined, {
      // One-shot: the next dead-letter move fails between its insert and its delete.
      interruptDeadLetterMove: () => {
        const fire = armed;
        armed = false;
        return fire;
      },
    });
    return {
      backend,
      inspector: memoryInspector(backend),
      injectDeadLetterFault: () => {
        armed = true;
      },
    };
  },
});
