/**
 * The second runtime for the rows marked `runtime: "node24"` (peers that need Node >= 22, and Soniq's own
 * rows again so the runtime is not what differs): Node 24 from the npm registry's `node` package, installed
 * once by `.ci/node24-install` (the script CI's Node 24 pass uses), with better-sqlite3 13 beside it (12
 * aborts on Node 24). A child on Node 24 loads `node24-hooks.mjs` first, which resolves `better-sqlite3` to
 * that copy wherever it is imported or required from.
 */
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const INSTALL = resolve(REPO_ROOT, ".ci", "node24-install");
const HOOKS = resolve(REPO_ROOT, "bench", "scripts", "node24-hooks.mjs");

export interface Node24 {
  /** The Node 24 binary. */
  execPath: string;
  /** `--import` of the hooks that point `better-sqlite3` at version 13. */
  execArgv: string[];
  env: Record<string, string>;
}

let cached: Node24 | Error | null = null;

/** Installs Node 24 on first use (a few seconds, once per machine); throws when it cannot. */
export function node24(): Node24 {
  if (cached === null) {
    try {
      const out = execFileSync(INSTALL, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
      const [execPath, sqlite13] = out.trim().split("\n");
      if (!execPath || !sqlite13) throw new Error(`${INSTALL} printed ${JSON.stringify(out)}`);
      cached = { execPath, execArgv: ["--import", HOOKS], env: { BENCH_SQLITE13: sqlite13 } };
    } catch (err) {
      cached = err instanceof Error ? err : new Error(String(err));
    }
  }
  if (cached instanceof Error) throw cached;
  return cached;
}

/** Why the Node 24 rows cannot run here, or null. */
export function node24Unavailable(): string | null {
  try {
    node24();
    return null;
  } catch (err) {
    return `Node 24 could not be installed: ${err instanceof Error ? err.message : String(err)}`;
  }
}
