/** Runs snippets/conformance.test.ts (the "Writing a backend" page's sample) as a reader's own vitest would. */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { root: fileURLToPath(new URL("../snippets/", import.meta.url)), include: ["conformance.test.ts"] },
});
