import { defineConfig } from "vitest/config";

/**
 * `pnpm test`: every package's tests, the example app's and the documentation's samples. The end-to-end suites
 * (packages/e2e: several processes, kills, a pooler, rolling deploys), the benchmark's tests (bench: the
 * peers' rows, a terminated PostgreSQL connection) and the dashboard's browser tests (chromium) are
 * `pnpm test:e2e` (vitest.e2e.config.ts): minutes of child processes and waiting that `.ci/run` runs too.
 */
export default defineConfig({
  test: {
    projects: ["packages/*", "!packages/e2e", "apps/*", "docs"],
    // Two test files at a time. Vitest's default is one fewer than the CPUs, so CI's 2-core machine ran the files
    // one by one (~12 minutes); most of them wait on PostgreSQL, child processes or timers, and every file uses
    // its own databases, schemas and temp directories, so two never share state.
    maxWorkers: 2,
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});
