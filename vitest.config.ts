import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*"],
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});
