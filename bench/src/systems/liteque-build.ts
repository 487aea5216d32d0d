/**
 * liteque's own better-sqlite3 (11.9.1, bench/peers/liteque) is not built by `pnpm install` (pnpm-workspace.yaml's
 * `allowBuilds` allows only the version Soniq uses): a fresh clone compiles one native addon, not two, and only the
 * benchmark's liteque row needs this one. It is built here, once, the first time that row runs: node-gyp (the
 * copy inside npm, which the machine's Node ships) in the package's directory, with the headers the workspace's
 * `nodeOptions` points `npm_config_nodedir` at, as its install script would have done.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

let built: string | null | undefined;

/** The installed better-sqlite3 of `@soniq/bench-liteque`: its directory. */
function addonDir(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("@soniq/bench-liteque");
  return dirname(createRequire(entry).resolve("better-sqlite3/package.json"));
}

/** npm's node-gyp beside this Node (<prefix>/lib/node_modules/npm), or null. */
function nodeGyp(): string | null {
  const prefix = dirname(dirname(process.execPath));
  const script = join(prefix, "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js");
  return existsSync(script) ? script : null;
}

/** Builds liteque's better-sqlite3 when its addon is missing; null when it is there, else why it is not. */
export function ensureLitequeAddon(): string | null {
  if (built !== undefined) return built;
  const dir = addonDir();
  if (existsSync(join(dir, "build", "Release", "better_sqlite3.node"))) {
    built = null;
    return built;
  }
  const gyp = nodeGyp();
  if (gyp === null) {
    built = `liteque's better-sqlite3 in ${dir} is not built, and no node-gyp was found beside ${process.execPath}`;
    return built;
  }
  process.stderr.write("liteque: building its better-sqlite3 11.9.1 once (about a minute)\n");
  const run = spawnSync(process.execPath, [gyp, "rebuild", "--release"], { cwd: dir, encoding: "utf8" });
  built =
    run.status === 0
      ? null
      : `building liteque's better-sqlite3 failed (exit ${run.status}): ${(run.stderr || run.stdout).trim().split("\n").slice(-3).join(" | ")}`;
  return built;
}
