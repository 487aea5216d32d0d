import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineProject } from "vitest/config";

/**
 * The CLI's command tests on PostgreSQL, in `pnpm test:e2e` (`pnpm test` runs them on SQLite): every test
 * file that takes its backends from test/seed.ts's BACKENDS, found here so a new one cannot be left out.
 */
const testDir = fileURLToPath(new URL("./test", import.meta.url));
const perBackend = readdirSync(testDir)
  .filter((file) => file.endsWith(".test.ts"))
  .filter((file) =>
    /import \{[^}]*\bBACKENDS\b[^}]*\} from "\.\/seed\.js"/.test(readFileSync(join(testDir, file), "utf8")),
  )
  .map((file) => `test/${file}`);

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "cli-postgres",
    include: perBackend,
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { SONIQ_CLI_TEST_BACKENDS: "postgres" },
  },
});
