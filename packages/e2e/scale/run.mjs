// `pnpm test:scale [--short] [vitest args]`: the scale suite (PgBouncer, replica, failover, worker hosts);
// --short (or SCALE_SHORT=1) is the CI size.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const short = args.includes("--short");
const rest = args.filter((a) => a !== "--short");
const config = fileURLToPath(new URL("./vitest.config.ts", import.meta.url));
const result = spawnSync("pnpm", ["exec", "vitest", "run", "--config", config, ...rest], {
  stdio: "inherit",
  env: { ...process.env, ...(short ? { SCALE_SHORT: "1" } : {}) },
});
process.exit(result.status ?? 1);
