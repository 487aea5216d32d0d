import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  // The tests run the built binary in child processes (several hundred ms each), so they get generous bounds.
  test: { name: "cli", include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 },
});
