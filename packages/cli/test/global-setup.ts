/**
 * The CLI tests run the built binary (dist/bin.js) as a user would, so `vitest run` builds it first: turbo
 * builds the CLI and every package it imports whose sources changed since their last build (and @soniq/mcp
 * and the dashboard, which `soniq mcp` and `soniq dashboard` load at run time), and is a cache hit (under a
 * second) otherwise. A fresh clone's `pnpm test` needs no `pnpm build`, and an edit to a
 * package's src/ never leaves these tests running a stale dist/.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

export default function buildCli(): void {
  const turbo = join(ROOT, "node_modules", ".bin", "turbo");
  if (!existsSync(turbo)) throw new Error(`${turbo} is missing: run pnpm install at the repo root first.`);
  const filters = ["--filter=@soniq/cli...", "--filter=@soniq/mcp...", "--filter=@soniq/dashboard..."];
  const run = spawnSync(turbo, ["run", "build", ...filters, "--output-logs=errors-only"], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
  });
  if (run.status !== 0)
    throw new Error(
      `building the CLI for its tests failed (turbo run build ${filters.join(" ")}, exit ${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`,
    );
}
