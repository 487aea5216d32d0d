declare function myBackend(options: object): import("@soniq/core/backend").Backend;

// #region snippet
// test/conformance.test.ts
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";

// and your backend's factory: import { myBackend } from "../src/index.js";

// Async: it probes one harness before registering (see "Which cases apply"). Top-level await is fine in
// an ESM test file.
await registerConformanceSuite({
  runner: vitestRunner(),
  // Called once per case (and once more for the probe): return a fresh backend (and optional hooks).
  harness: async ({ caseId }) => {
    const backend = myBackend({
      /* fresh storage, or shared storage: every case uses its own queue names */
    });
    return {
      backend,
      inspector: {
        /* optional raw access, see below */
      },
      injectDeadLetterFault: () => {
        /* optional, see below */
      },
      // optional: a second instance on the same storage, for the peers/* cases
      openPeer: () =>
        myBackend({
          /* the same storage */
        }),
      cleanup: async () => {
        /* optional: runs after the kit closed the backend */
      },
    };
  },
  skip: {
    // Typed: keys are case ids. Every skip needs a written reason; the case still shows, as skipped.
    // "leases/exclusive": "leases are not implemented yet (issue #12)",
  },
});
// #endregion snippet
