import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "bench", "docs"],
    // Two test files at a time. Vitest's default is one fewer than the CPUs, so CI's 2-core machine ran the files
    // one by one (~12 minutes); most of them wait on PostgreSQL, child processes or timers, and every file uses
    // its own databases, schemas and temp directories, so two never share state.
    maxWorkers: 2,
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});
