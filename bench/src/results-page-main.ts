/**
 * Writes the published-results page: `node --import tsx bench/src/results-page-main.ts <out.md>` reads every
 * bench/published/*.json (and its `<name>.md` note, when there is one) and writes the page (results-page.ts).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Published, parseBenchDoc, renderResultsPage } from "./results-page.js";

export const PUBLISHED = resolve(dirname(fileURLToPath(import.meta.url)), "..", "published");

export function readPublished(dir = PUBLISHED): Published[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((file) => {
      const notePath = resolve(dir, file.replace(/\.json$/, ".md"));
      const published: Published = {
        file,
        doc: parseBenchDoc(file, readFileSync(resolve(dir, file), "utf8")),
      };
      if (existsSync(notePath)) published.note = readFileSync(notePath, "utf8");
      return published;
    });
}

const out = process.argv[2];
const direct =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (direct) {
  if (!out) throw new Error("usage: results-page-main.ts <out.md>");
  writeFileSync(out, renderResultsPage(readPublished()));
  process.stderr.write(`wrote ${out}\n`);
}
