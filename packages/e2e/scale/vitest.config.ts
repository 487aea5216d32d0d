import { defineProject } from "vitest/config";

/**
 * The scale suite: run by `pnpm test:scale` (not by `pnpm test`). SCALE_SHORT=1 (`--short`) runs the CI
 * size. Files run one at a time: they start private servers and poolers and share a 2-core machine.
 */
export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "scale",
    root: import.meta.dirname,
    include: ["**/*.scale.ts"],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
