import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  // The site's browser test (test/site.browser.ts) needs a built site: `pnpm test:docs` runs it, not `pnpm test`.
  // Snippet runs go two at a time (it.concurrent): most of each is tsx starting up, and CI has two cores.
  test: { name: "docs", include: ["test/**/*.test.ts"], hookTimeout: 60_000, maxConcurrency: 2 },
});
