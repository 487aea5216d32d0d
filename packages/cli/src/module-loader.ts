/**
 * Loads the application module given to `worker` / `scheduler` and finds its Soniq instance (the export
 * named `soniq`, else the default export). TypeScript modules go through tsx's ESM loader when tsx is
 * installed (looked up from the current directory first, then beside the CLI).
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Soniq } from "@soniq/core";
import { CliError } from "./errors.js";

const TS = new Set([".ts", ".mts", ".cts", ".tsx"]);

/** tsx's ESM API file (its `tsx/esm/api` import target), read from the package's own exports map. */
function resolveTsx(): string | null {
  for (const base of [join(process.cwd(), "package.json"), import.meta.filename]) {
    let manifest: string;
    try {
      manifest = createRequire(base).resolve("tsx/package.json");
    } catch {
      continue; // not installed there
    }
    const pkg = JSON.parse(readFileSync(manifest, "utf8")) as {
      exports?: Record<string, { import?: { default?: string } | string }>;
    };
    const target = pkg.exports?.["./esm/api"]?.import;
    const file = typeof target === "string" ? target : target?.default;
    if (file) return join(dirname(manifest), file);
  }
  return null;
}

async function registerTsx(file: string): Promise<void> {
  const api = resolveTsx();
  if (!api) {
    throw new CliError(
      "SONIQ_CLI_MODULE",
      `${file} is TypeScript and tsx is not installed. Install it (npm install -D tsx), or build the module and pass the .js file.`,
    );
  }
  const mod = (await import(pathToFileURL(api).href)) as {
    register?: () => unknown;
    default?: { register?: () => unknown };
  };
  const register = mod.register ?? mod.default?.register;
  if (typeof register !== "function")
    throw new CliError("SONIQ_CLI_MODULE", `tsx at ${api} has no register().`);
  register();
}

/** Duck-typed, so a module using another copy of @soniq/core is recognised too. */
export function isSoniq(value: unknown): value is Soniq {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.worker === "function" &&
    typeof v.job === "function" &&
    typeof v.close === "function" &&
    typeof v.backend === "object" &&
    v.backend !== null
  );
}

export async function loadApp(specifier: string): Promise<Soniq> {
  const file = resolve(specifier);
  if (!existsSync(file)) throw new CliError("SONIQ_CLI_MODULE", `no module at ${file}.`);
  if (TS.has(extname(file))) await registerTsx(file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new CliError("SONIQ_CLI_MODULE", `cannot load ${specifier}: ${message}`, { cause: err });
  }
  const candidate = isSoniq(mod.soniq) ? mod.soniq : isSoniq(mod.default) ? mod.default : null;
  if (!candidate) {
    throw new CliError(
      "SONIQ_CLI_MODULE",
      `${specifier} exports no Soniq instance. Export it as \`export const soniq = new Soniq(...)\` or as the default export.`,
    );
  }
  return candidate;
}
