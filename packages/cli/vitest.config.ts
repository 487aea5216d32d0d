import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  // The tests run the built binary in child processes (several hundred ms each), so they get generous bounds;
  // the global setup builds that binary (and what it imports) when its sources changed.
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The command tests that take their backends from test/seed.ts's BACKENDS run on SQLite here; the
    // `cli-postgres` project (vitest.postgres.config.ts, in `pnpm test:e2e`) runs them on PostgreSQL.
    env: { SONIQ_CLI_TEST_BACKENDS: "sqlite" },
  },
});
