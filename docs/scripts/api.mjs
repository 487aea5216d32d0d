/**
 * Generates the API reference (docs/api/, git-ignored) with TypeDoc, typedoc-plugin-markdown and
 * typedoc-vitepress-theme: one module per published entry point, read from every public package's
 * package.json "exports" (its `source` condition), so a new subpath export appears without editing this file.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
repairCrossPageAnchors();
console.log(`API reference: ${points.length} entry points -> ${out}`);

/** The heading ids VitePress gives a markdown page (its slugify: lowercase, runs of other characters as "-"). */
function headingIds(markdown) {
  const ids = new Set();
  const seen = new Map();
  for (const [, text] of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = text
      .replace(/\\/g, "")
      .replace(/[`*]/g, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    ids.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return ids;
}

/**
 * TypeDoc's markdown links to a member sometimes use an anchor that page does not have:
 * `core#job_statuses` for the heading VitePress ids `job-statuses`, `#soniqoptions-1` for the only `soniqoptions`.
 * Each such link is pointed at the heading it means; the site's browser test
 * fails on any anchor that is still missing.
 */
function repairCrossPageAnchors() {
  const files = readdirSync(out, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".md"));
  const idsOf = new Map(files.map((f) => [join(out, f), headingIds(readFileSync(join(out, f), "utf8"))]));
  for (const file of files) {
    const path = join(out, file);
    const text = readFileSync(path, "utf8");
    const repaired = text.replace(/\]\(((?:[^)#\s]+\.md)?)#([^)\s]+)\)/g, (link, target, anchor) => {
      const ids = idsOf.get(target ? join(dirname(path), target) : path);
      if (!ids || ids.has(anchor)) return link;
      const meant = [anchor.replace(/_/g, "-"), anchor.replace(/-\d+$/, "")].find((a) => ids.has(a));
      return meant ? `](${target}#${meant})` : link;
    });
    if (repaired !== text) writeFileSync(path, repaired);
  }
}
