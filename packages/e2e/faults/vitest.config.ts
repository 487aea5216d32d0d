import { defineProject } from "vitest/config";

/** The fault suite: run by `pnpm test:faults` (not by `pnpm test`). FAULTS_SHORT=1 runs the short version. */
export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "faults",
    root: import.meta.dirname,
    include: ["**/*.fault.ts"],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
