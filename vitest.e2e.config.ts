import { defineConfig } from "vitest/config";

/**
 * `pnpm test:e2e`: the suites `pnpm test` leaves out because they spend minutes in child processes, kills and
 * waits: packages/e2e (several worker processes against one backend, SIGKILLs, a private PgBouncer, rolling
 * deploys, third-party backends), the benchmark's tests (every peer's row runs and verifies) and the dashboard's
 * browser tests (Debian's chromium through playwright-core). `.ci/run` runs both commands.
 */
export default defineConfig({
  test: {
    projects: [
      "packages/e2e",
      "bench",
      "packages/dashboard/vitest.browser.config.ts",
      "packages/cli/vitest.postgres.config.ts",
    ],
    maxWorkers: 2,
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});
