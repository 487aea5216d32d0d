/**
 * Generates the API reference (docs/api/, git-ignored) with TypeDoc, typedoc-plugin-markdown and
 * typedoc-vitepress-theme: one module per published entry point, read from every public package's
 * package.json "exports" (its `source` condition), so a new subpath export appears without editing this file.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Application } from "typedoc";

const docs = dirname(dirname(fileURLToPath(import.meta.url)));
const repo = dirname(docs);
const out = join(docs, "api");

/** Every published entry point: `{ pkg, subpath, file }`. */
export function entryPoints() {
  const found = [];
  for (const dir of readdirSync(join(repo, "packages")).sort()) {
    const manifest = JSON.parse(readFileSync(join(repo, "packages", dir, "package.json"), "utf8"));
    if (manifest.private) continue;
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      const source = typeof target === "string" ? target : target.source;
      if (!source?.endsWith(".ts"))
        throw new Error(`${manifest.name} "${subpath}" has no TypeScript source condition`);
      found.push({ pkg: manifest.name, subpath, file: join(repo, "packages", dir, source) });
    }
  }
  return found;
}

const points = entryPoints();
rmSync(out, { recursive: true, force: true });
const app = await Application.bootstrapWithPlugins({
  entryPoints: points.map((p) => p.file),
  entryPointStrategy: "resolve",
  tsconfig: join(docs, "tsconfig.api.json"), // the packages' sources only, not their tests
  plugin: ["typedoc-plugin-markdown", "typedoc-vitepress-theme"],
  out,
  readme: "none",
  name: "API reference",
  excludePrivate: true,
  excludeInternal: true,
  skipErrorChecking: true,
  logLevel: "Warn",
  hideGenerator: true,
  // One page per entry point (not one per member): 19 pages a reader scrolls and searches, not 460.
  outputFileStrategy: "modules",
  docsRoot: docs,
  sidebar: { autoConfiguration: true, format: "vitepress", pretty: true, collapsed: true },
});
const project = await app.convert();
if (!project) throw new Error("TypeDoc could not convert the entry points");
// TypeDoc names a module by its path ("core/src/schema/pg"); readers know it by its import ("@soniq/core/schema/pg").
const importOf = new Map(
  points.map((p) => [
    relative(join(repo, "packages"), p.file)
      .replace(/\.ts$/, "")
      .replace(/\/index$/, ""),
    p.subpath === "." ? p.pkg : `${p.pkg}${p.subpath.slice(1)}`,
  ]),
);
for (const child of project.children ?? []) {
  const name = importOf.get(child.name);
  if (!name) throw new Error(`TypeDoc made a module "${child.name}" that is no published entry point`);
  child.name = name;
}
await app.generateOutputs(project);
if (app.logger.hasErrors()) process.exit(1);
console.log(`API reference: ${points.length} entry points -> ${out}`);
