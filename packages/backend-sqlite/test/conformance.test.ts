import { sqliteBackend } from "@soniq/backend-sqlite";
import { sqliteBackendWithFaults } from "@soniq/backend-sqlite/testing";
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";
import { afterAll } from "vitest";
import { tempDir } from "./helpers.js";
import { sqliteInspector } from "./inspector.js";

const tmp = tempDir("soniq-sqlite-conformance-");
afterAll(() => tmp.remove());

await registerConformanceSuite({
  name: "sqlite backend conformance",
  runner: vitestRunner(),
  harness: ({ caseId }) => {
    const file = tmp.file(caseId.replaceAll("/", "_"));
    let faultArmed = false;
    const backend = sqliteBackendWithFaults(
      { filename: file },
      {},
      {
        // One-shot: the next dead-letter move fails between its insert and its delete (the settle
        // transaction rolls back).
        interruptDeadLetterMove: () => {
          const fire = faultArmed;
          faultArmed = false;
          return fire;
        },
      },
    );
    const inspector = sqliteInspector(file);
    return {
      backend,
      inspector,
      injectDeadLetterFault: () => {
        faultArmed = true;
      },
      // A second connection to the same file, as another process would open it.
      openPeer: () => sqliteBackend({ filename: file }),
      cleanup: () => inspector.close(),
    };
  },
});
