/** Runs snippets/conformance.test.ts (the "Writing a backend" page's sample) as a reader's own vitest would. */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // Vitest's cache goes with the docs package's modules, not into snippets/ (which holds only the site's samples).
  cacheDir: fileURLToPath(new URL("../node_modules/.vite-conformance-snippet", import.meta.url)),
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { root: fileURLToPath(new URL("../snippets/", import.meta.url)), include: ["conformance.test.ts"] },
});
