import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "dashboard",
    include: ["test/**/*.test.ts"],
    // The browser tests are their own project (vitest.browser.config.ts), run by `pnpm test:e2e`.
    exclude: ["test/browser*.test.ts"],
    // Some files make a PostgreSQL database per test and migrate it (CREATE DATABASE copies a template and
    // syncs it to disk): on the 2-core CI machine, with another test file beside it, one such hook once took
    // more than vitest's default 10 s. A limit, not a timing: a hook that hangs still fails.
    hookTimeout: 60_000,
  },
});
