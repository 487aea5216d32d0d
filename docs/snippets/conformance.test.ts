// test/conformance.test.ts in your backend's package
import { memoryBackend } from "@soniq/backend-memory"; // stand-in: build your own backend here
import { registerConformanceSuite } from "@soniq/testkit";
import { vitestRunner } from "@soniq/testkit/vitest";

await registerConformanceSuite({
  name: "my backend",
  runner: vitestRunner(),
  // A fresh backend per case. Cases use their own queue names, so they may share one database.
  harness: async () => ({ backend: memoryBackend() }),
  // Cases your backend cannot pass, each with a written reason: { "leases/exclusive": "why" }.
  skip: {},
});
