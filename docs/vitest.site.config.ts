/** The site's browser test (test/site.browser.ts): `pnpm test:docs` builds the site, then runs this. */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL(".", import.meta.url)),
    include: ["test/site.browser.ts"],
    hookTimeout: 60_000,
  },
});
