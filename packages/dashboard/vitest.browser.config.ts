import { defineProject } from "vitest/config";

/** The dashboard's browser tests (chromium through playwright-core): part of `pnpm test:e2e`. */
export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "dashboard-browser",
    include: ["test/browser*.test.ts"],
    // A PostgreSQL database per test, migrated, beside a browser: a limit, not a timing.
    hookTimeout: 60_000,
  },
});
