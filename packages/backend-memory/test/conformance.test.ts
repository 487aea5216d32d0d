import { memoryBackend } from "@soniq/backend-memory";
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";

await registerConformanceSuite({
  name: "memory backend conformance",
  runner: vitestRunner(),
  harness: () => {
    let faultArmed = false;
    const backend = memoryBackend({
      testHooks: {
        afterDeadLetterInsert: () => {
          if (!faultArmed) return;
          faultArmed = false;
          throw new Error("injected fault between the dead-letter insert and the job delete");
        },
      },
    });
    return {
      backend,
      inspector: backend.inspector(),
      injectDeadLetterFault: () => {
        faultArmed = true;
      },
    };
  },
});
